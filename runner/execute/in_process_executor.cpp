#include "runner/execute/in_process_executor.hpp"

#include "runner/common/interrupt.hpp"

namespace attnsweep::execute {

CaseOutcome InProcessExecutor::run(const Case& c, const std::string& trace_path) {
  if (!runner_) runner_ = std::make_unique<CaseRunner>(device_, settings_, seed_);
  try {
    return {CaseOutcome::Kind::measured, runner_->run(c, trace_path)};
  } catch (const Interrupted&) {
    return {CaseOutcome::Kind::interrupted, {}};
  }
}

}  // namespace attnsweep::execute
