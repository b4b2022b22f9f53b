#include "runner/execute/sweep.hpp"

#include <memory>
#include <set>

#include "runner/common/interrupt.hpp"
#include "runner/common/log.hpp"
#include "runner/common/sha256.hpp"
#include "runner/config/config.hpp"
#include "runner/device/device.hpp"
#include "runner/execute/fit_check.hpp"
#include "runner/execute/in_process_executor.hpp"
#include "runner/execute/run_start.hpp"
#include "runner/execute/trace_paths.hpp"
#include "runner/execute/worker.hpp"
#include "runner/execute/worker_executor.hpp"
#include "runner/plan/plan.hpp"
#include "runner/report/case_line.hpp"
#include "storage/run_reader.hpp"
#include "storage/store.hpp"

namespace attnsweep::execute {
namespace {

// Runs every case not stored yet, in the configured order, storing each as it
// finishes; stops early at an interrupt. Marks the run failed if anything throws.
void run_cases(const Plan& plan, const Config& config, Executor& executor, storage::Store& store,
               std::int64_t run_id, const std::set<int>& done, const std::string& traces) {
  try {
    const int total = static_cast<int>(plan.cases.size());
    for (const Case& c : execution_order(plan, config.measure.case_order, config.seed)) {
      if (done.count(c.plan_index)) continue;
      if (interrupt_requested()) break;
      log::info("[" + std::to_string(c.plan_index + 1) + "/" + std::to_string(total) + "] " + c.label());
      const CaseOutcome outcome = executor.run(c, trace_file(traces, run_id, c));
      if (outcome.kind == CaseOutcome::Kind::interrupted) break;
      if (outcome.kind == CaseOutcome::Kind::stored) continue;
      const CaseResult& result = outcome.result;
      store.add_case(run_id, c, result);
      (result.status == CaseStatus::ok ? log::info : log::warn)("  " + report::one_line_result(c, result));
      for (const auto& warning : result.warnings) log::warn("  " + warning);
      if (result.device_unusable) {
        throw std::runtime_error("the CUDA context of this process is unusable after " + c.label() +
                                 " (stored as 'error'); no later case can run here. Continue in a fresh process "
                                 "with --resume, and use --isolate for sweeps that may fault");
      }
    }
  } catch (...) {
    store.finish_run(run_id, RunStatus::failed);
    throw;
  }
}

}  // namespace

SweepOutcome run_sweep(const SweepRequest& request) {
  // Everything the user gave is checked before the database is touched.
  const Config config = load_config(request.config_path);
  const Plan plan = make_plan(config);
  const Device requested = request.device.value_or(config.device);
  // With --isolate the parent leaves CUDA alone: a worker answers the device questions.
  std::optional<DeviceProbe> probe;
  if (request.isolate) probe = probe_device_in_worker(requested);
  const Device device = probe ? probe->environment.device : resolve_device(requested);
  check_cases_fit(plan, device, probe ? probe->memory_bytes : device_memory_bytes(device), request.config_path);
  const std::string traces = trace_directory(request.traces_dir, config.measure.traces, request.db_path);
  if (!traces.empty()) create_trace_directory(traces);
  const std::string config_sha256 = sha256_hex(config.yaml_text);

  storage::Store store(request.db_path);
  SweepOutcome outcome;
  outcome.planned_cases = static_cast<int>(plan.cases.size());
  outcome.traces_dir = traces;
  std::set<int> done;
  if (request.resume) {
    outcome.run_id = run_to_resume(request.db_path, *request.resume, request.config_path, config_sha256, device);
    done = storage::RunReader(request.db_path).stored_plan_indexes(outcome.run_id);
    store.reopen_run(outcome.run_id);
    log::info("resuming run " + std::to_string(outcome.run_id) + ": " + std::to_string(done.size()) + " of " +
              std::to_string(plan.cases.size()) + " cases already stored");
  } else {
    outcome.run_id = begin_new_run(store, {request.config_path, &config, config_sha256, device,
                                           probe ? std::optional<EnvironmentInfo>(probe->environment) : std::nullopt,
                                           outcome.planned_cases, request.isolate});
  }

  std::unique_ptr<Executor> executor;
  if (request.isolate) {
    executor = std::make_unique<WorkerExecutor>(WorkerContext{request.config_path, config_sha256, request.db_path,
                                                              outcome.run_id, device, config.measure.case_timeout_s});
  } else {
    executor = std::make_unique<InProcessExecutor>(device, config.measure, config.seed);
  }
  install_interrupt_handlers();
  run_cases(plan, config, *executor, store, outcome.run_id, done, traces);
  outcome.status = interrupt_requested() ? RunStatus::interrupted : RunStatus::done;
  store.finish_run(outcome.run_id, outcome.status);
  return outcome;
}

}  // namespace attnsweep::execute
