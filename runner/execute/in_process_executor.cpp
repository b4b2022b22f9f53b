#include "runner/execute/in_process_executor.hpp"

#include "runner/common/interrupt.hpp"

namespace attnsweep::execute {

void InProcessExecutor::begin(CaseQueue queue) {
  for (auto& unit : queue) cases_.insert(cases_.end(), unit.begin(), unit.end());
}

CaseEvent InProcessExecutor::next() {
  if (cases_.empty()) return {CaseEvent::Kind::done};
  const QueuedCase queued = cases_.front();
  if (!announced_) {
    if (interrupt_requested()) return {CaseEvent::Kind::interrupted};
    announced_ = true;
    return {CaseEvent::Kind::started, queued.c->plan_index};
  }
  cases_.pop_front();
  announced_ = false;
  if (!runner_) runner_ = std::make_unique<CaseRunner>(device_, settings_, seed_);
  try {
    CaseEvent event{CaseEvent::Kind::finished, queued.c->plan_index};
    event.outcome.result = runner_->run(*queued.c, queued.trace_path);
    return event;
  } catch (const Interrupted&) {
    return {CaseEvent::Kind::interrupted};
  }
}

}  // namespace attnsweep::execute
