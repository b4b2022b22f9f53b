#include "runner/execute/worker_executor.hpp"

#include "runner/execute/worker.hpp"
#include "runner/measure/failed_result.hpp"
#include "storage/run_reader.hpp"

namespace attnsweep::execute {

CaseOutcome WorkerExecutor::run(const Case& c, const std::string& trace_path) {
  const WorkerOutcome outcome = run_case_in_worker(
      {context_.config_sha256, context_.db_path, context_.run_id, c.plan_index, context_.device,
       trace_path},
      context_.case_timeout_s, context_.keep_alive);
  switch (outcome.kind) {
    case WorkerOutcome::Kind::finished:
      // Exit status 0 is no proof: an op library may call exit(0) in the middle
      // of the case. The case must be in the database (stored by this worker, or
      // before it by an earlier holder of the run).
      if (storage::RunReader(context_.db_path).stored_plan_indexes(context_.run_id).count(c.plan_index)) {
        return {CaseOutcome::Kind::stored, {}};
      }
      return {CaseOutcome::Kind::measured,
              failed_result(c, context_.device, CaseStatus::crashed, describe_worker_exit(/*exited with 0*/ 0))};
    case WorkerOutcome::Kind::interrupted: return {CaseOutcome::Kind::interrupted, {}};
    case WorkerOutcome::Kind::timed_out:
      return {CaseOutcome::Kind::measured, failed_result(c, context_.device, CaseStatus::timeout, outcome.detail)};
    case WorkerOutcome::Kind::crashed: break;
  }
  return {CaseOutcome::Kind::measured, failed_result(c, context_.device, CaseStatus::crashed, outcome.detail)};
}

}  // namespace attnsweep::execute
