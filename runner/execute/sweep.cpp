#include "runner/execute/sweep.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <filesystem>
#include <memory>
#include <optional>
#include <map>
#include <set>
#include <utility>

#include "runner/common/exit_guard.hpp"
#include "runner/common/interrupt.hpp"
#include "runner/common/log.hpp"
#include "runner/common/sha256.hpp"
#include "runner/common/text.hpp"
#include "runner/config/config.hpp"
#include "runner/device/device.hpp"
#include "runner/device/environment.hpp"
#include "runner/execute/device_pool.hpp"
#include "runner/execute/op_library_watch.hpp"
#include "runner/execute/fit_check.hpp"
#include "runner/execute/in_process_executor.hpp"
#include "runner/execute/op_library_check.hpp"
#include "runner/execute/progress.hpp"
#include "runner/execute/progress_display.hpp"
#include "runner/execute/run_start.hpp"
#include "runner/execute/trace_paths.hpp"
#include "runner/execute/worker.hpp"
#include "runner/plan/claims_match.hpp"
#include "runner/plan/cost.hpp"
#include "runner/plan/plan.hpp"
#include "runner/plan/shard.hpp"
#include "runner/report/case_line.hpp"
#include "runner/variants/op_library.hpp"
#include "runner/storage/run_reader.hpp"
#include "runner/storage/store.hpp"

namespace attnsweep::execute {
namespace {

// Another process took the run over (this one's heartbeat had gone stale): stop
// without touching it further.
struct ClaimLost : std::runtime_error {
  explicit ClaimLost(std::int64_t run_id)
      : std::runtime_error("run " + std::to_string(run_id) + " was taken over by another process (this one's "
                           "heartbeat was older than " + std::to_string(storage::kClaimStaleAfterSeconds) +
                           " s); stopped without changing it further") {}
};

// The database file a run writes to, as it was when opened: deleting or
// replacing it mid-run would lose every case stored since, so the sweep stops
// at once instead of reporting results that are gone.
class DatabaseFile {
 public:
  explicit DatabaseFile(std::string path) : path_(std::move(path)), identity_(identity_of(path_)) {}
  void check_still_there() const {
    if (!identity_ || identity_of(path_) != identity_) {
      throw std::runtime_error(path_ + ": the database file was deleted or replaced during the run; the cases "
                               "stored in it are gone with it, so the sweep stopped");
    }
  }

 private:
  static std::optional<std::pair<dev_t, ino_t>> identity_of(const std::string& path) {
    struct stat info {};
    if (stat(path.c_str(), &info) != 0) return std::nullopt;
    return std::make_pair(info.st_dev, info.st_ino);
  }
  std::string path_;
  std::optional<std::pair<dev_t, ino_t>> identity_;
};

// "[3/42] ": the case's position, which begins its log lines.
std::string position_prefix(int position, int total) {
  return "[" + std::to_string(position) + "/" + std::to_string(total) + "] ";
}

// A case's result line is a warning only when the case failed: ok and
// unsupported are results like any other (and stay out of --quiet's output).
void log_case_line(CaseStatus status, const std::string& line) {
  (status == CaseStatus::ok || status == CaseStatus::unsupported ? log::info : log::warn)(line);
}

// What the sweep logs of a finished case, and counts.
struct FinishedCase {
  CaseStatus status = CaseStatus::ok;
  std::string result_line;
  std::vector<std::string> warnings;
  bool kept_earlier = false;
};

// The one case loop of every executor: logs each case as it starts and ends,
// stores what the executor measured (a worker stores its own), counts
// progress, and after each case checks that the database is still there and
// renews the claim. Stops early at an interrupt; marks the run failed if
// anything throws.
void run_cases(Executor& executor, CaseQueue queue, const Plan& plan, storage::Store& store,
               const DatabaseFile& database, const std::string& db_path, std::int64_t run_id,
               ProgressDisplay& progress, ExitGuard& exit_guard) {
  try {
    executor.begin(std::move(queue));
    const int total = static_cast<int>(plan.cases.size());
    std::map<int, const Case*> cases;  // by plan index: the plan may be a shard's
    for (const Case& c : plan.cases) cases[c.plan_index] = &c;
    std::map<int, std::string> prefixes;  // of the cases in flight
    for (;;) {
      const CaseEvent event = executor.next();
      if (event.kind == CaseEvent::Kind::done || event.kind == CaseEvent::Kind::interrupted) break;
      if (event.kind == CaseEvent::Kind::waiting) {
        if (!store.heartbeat(run_id)) throw ClaimLost(run_id);
        continue;
      }
      const Case& c = *cases.at(event.plan_index);
      if (event.kind == CaseEvent::Kind::started) {
        const std::string label = c.label() + (event.where.empty() ? "" : " on " + event.where);
        const std::string prefix = position_prefix(progress.started(c.plan_index, label), total);
        prefixes[c.plan_index] = prefix;
        log::info(prefix + label);
        exit_guard.set_activity("case " + c.label() + " of run " + std::to_string(run_id) + " in " + db_path);
        continue;
      }
      database.check_still_there();
      if (!store.heartbeat(run_id)) throw ClaimLost(run_id);
      const std::string prefix = prefixes[c.plan_index];
      prefixes.erase(c.plan_index);
      const CaseOutcome& outcome = event.outcome;
      FinishedCase finished;
      if (outcome.kind == CaseOutcome::Kind::stored) {
        finished = {outcome.stored.status, outcome.stored.result_line, outcome.stored.warnings,
                    outcome.stored.kept_earlier};
      } else {
        const CaseResult& result = outcome.result;
        finished = {result.status, report::one_line_result(c, result), result.warnings,
                    !store.add_case(run_id, c, result)};
      }
      if (finished.kept_earlier) {
        log::warn(prefix + c.label() + ": already stored in run " + std::to_string(run_id) + "; kept the stored one");
        progress.finished(c.plan_index, finished.status);
        continue;
      }
      log_case_line(finished.status,
                    prefix + finished.result_line + (event.where.empty() ? "" : " (" + event.where + ")"));
      progress.finished(c.plan_index, finished.status);
      for (const auto& warning : finished.warnings) log::warn("  " + warning);
      if (outcome.kind == CaseOutcome::Kind::measured && outcome.result.device_unusable) {
        throw std::runtime_error("the CUDA context of this process is unusable after " + c.label() +
                                 " (stored as 'error'); no later case can run here. Continue in a fresh process "
                                 "with --resume, and use --isolate for sweeps that may fault");
      }
    }
  } catch (...) {
    store.finish_run(run_id, RunStatus::failed);  // changes nothing once another process holds the run
    throw;
  }
}

// A unit is split into single cases when it costs more than 1/(devices x 4) of
// the whole: the last units then keep every device busy to the end.
constexpr int kUnitsPerDevice = 4;

// The cases not stored yet: on one device each case on its own, in the
// configured order; on the devices of a --gpus pool the plan's work units,
// longest expected first (runner/plan/shard.hpp).
CaseQueue cases_to_run(const Plan& plan, const Config& config, const std::set<int>& done, std::size_t devices,
                       const std::string& traces, std::int64_t run_id) {
  std::map<int, const Case*> cases;  // the plan's own: execution_order returns copies
  for (const Case& c : plan.cases) cases[c.plan_index] = &c;
  const auto queued = [&](int index) {
    const Case& c = *cases.at(index);
    return QueuedCase{&c, trace_file(traces, run_id, c)};
  };
  CaseQueue queue;
  if (devices == 0) {
    for (const Case& c : execution_order(plan, config.measure.case_order, config.seed)) {
      if (!done.count(c.plan_index)) queue.push_back({queued(c.plan_index)});
    }
    return queue;
  }
  for (const WorkUnit& unit : work_units(plan, config.measure, static_cast<int>(devices), kUnitsPerDevice)) {
    std::vector<QueuedCase> left;
    for (int index : unit.plan_indexes) {
      if (!done.count(index)) left.push_back(queued(index));
    }
    if (!left.empty()) queue.push_back(std::move(left));
  }
  return queue;
}

// The executor of the run: in this process, a worker per case (--isolate), or
// a worker per device (--gpus, with --isolate a fresh one per case).
std::unique_ptr<Executor> make_executor(const SweepRequest& request, const Config& config,
                                        const std::vector<Device>& gpus, const Device& device,
                                        const std::string& config_sha256, std::int64_t run_id,
                                        OpLibraryWatch& libraries) {
  if (gpus.empty() && !request.isolate) {
    return std::make_unique<InProcessExecutor>(device, config.measure, config.seed);
  }
  PoolRequest pool;
  pool.config_sha256 = config_sha256;
  pool.db_path = request.db_path;
  pool.run_id = run_id;
  pool.devices = gpus;
  pool.case_timeout_s = config.measure.case_timeout_s;
  pool.isolate = request.isolate;
  // Each worker loads the op libraries anew: one rebuilt since the run began stops it (issue 55, item 9).
  pool.before_worker_start = [&libraries] { libraries.check(); };
  pool.op_library_identities = config.op_libraries.empty() ? std::string() : libraries.identities();
  if (gpus.empty()) {
    pool.devices = {device};
    pool.serving = false;
  }
  return std::make_unique<WorkerPool>(std::move(pool));
}

// runs.gpus after a resume: the devices listed before, then the new ones.
std::string gpus_used(const std::string& before, const std::vector<Device>& now) {
  std::vector<std::string> names;
  std::istringstream listed(before);
  for (std::string name; std::getline(listed, name, ',');) {
    if (!name.empty()) names.push_back(name);
  }
  for (const Device& device : now) {
    if (std::find(names.begin(), names.end(), device.to_string()) == names.end()) names.push_back(device.to_string());
  }
  std::string joined;
  for (const auto& name : names) joined += (joined.empty() ? "" : ",") + name;
  return joined;
}

// The devices of a --gpus run, asked of a worker (the parent never initializes
// CUDA). With ATTNSWEEP_TEST_VARIANTS=1 and --device cpu, one CPU worker per
// listed index: how the pool is tested on machines without a GPU.
std::vector<Device> devices_for_gpus(const std::string& gpus, const Device& requested, DeviceProbe& probe) {
  if (requested.kind() == DeviceKind::cpu) {
    const char* testing = std::getenv("ATTNSWEEP_TEST_VARIANTS");
    if (!testing || std::string(testing) != "1") {
      throw BadInputError("--gpus runs on CUDA devices, but the device is cpu (from --device or the config); drop "
                          "--gpus, or use --device cuda");
    }
    std::vector<Device> workers;
    for (std::size_t i = 0; i < parse_gpus(gpus, 64).size(); ++i) workers.push_back(Device::cpu());
    return workers;
  }
  const std::vector<Device> devices = parse_gpus(gpus, probe.environment.cuda_device_count);
  if (devices.front() != probe.environment.device) probe = probe_device_in_worker(devices.front());
  return devices;
}

// A run resumed on another GPU (the same model on another machine, a device lent anew) goes on: each case keeps its
// GPU in cases.gpu_uuid. But run_devices, and so the report's environment, holds the GPUs the run started on, so
// the log says that the run now spans GPUs (an H200 claims run resumed on a second H200 said nothing). `here` is
// the UUID of the GPU this sweep runs on (a worker's answer where the parent leaves CUDA alone). Only a warning:
// a run_devices that cannot be read is the report's business, not a reason to refuse the resume.
void warn_if_resumed_on_another_gpu(const std::string& db_path, std::int64_t run_id, const std::string& here) {
  std::vector<std::string> started_on;
  try {
    std::set<std::string> uuids;  // each once, in order
    for (const storage::RunDevice& device : storage::RunReader(db_path).run_devices(run_id)) {
      if (!device.environment.gpu_uuid.empty()) uuids.insert(device.environment.gpu_uuid);
    }
    started_on.assign(uuids.begin(), uuids.end());
  } catch (const std::exception& error) {
    log::debug(std::string("the run's GPUs could not be read: ") + error.what());
    return;
  }
  if (started_on.empty() || std::find(started_on.begin(), started_on.end(), here) != started_on.end()) return;
  log::warn("resuming run " + std::to_string(run_id) + " on another GPU (" + (here.empty() ? "no GPU UUID here" : here) +
            "; the run started on " + text::join(started_on, ", ") +
            "): each case keeps its GPU in cases.gpu_uuid; the run's environment (run_devices, the report's) is "
            "the GPU it started on");
}

// cuBLAS is deterministic only with a fixed workspace: PyTorch refuses its
// matmuls under deterministic algorithms unless CUBLAS_WORKSPACE_CONFIG is set
// before cuBLAS starts (PyTorch's reproducibility notes). A sweep with a
// deterministic case sets ":4096:8" where the environment has none, before
// CUDA is touched (workers inherit it); the run's environment records it.
// Decided on the whole sweep, not a shard's part, so that every shard's run
// has the same environment and merge takes them.
void prepare_for_determinism(const Plan& plan) {
  const bool any = std::any_of(plan.cases.begin(), plan.cases.end(), [](const Case& c) { return c.deterministic; });
  if (!any) return;
  if (const char* set = std::getenv("CUBLAS_WORKSPACE_CONFIG")) {
    const std::string value = set;
    if (value != ":4096:8" && value != ":16:8") {
      log::warn("CUBLAS_WORKSPACE_CONFIG=" + value + " is not one of PyTorch's deterministic settings (:4096:8 or "
                ":16:8): deterministic cases that use cuBLAS will be unsupported with PyTorch's reason");
    }
    return;
  }
  setenv("CUBLAS_WORKSPACE_CONFIG", ":4096:8", /*overwrite=*/0);
  log::info("deterministic cases: CUBLAS_WORKSPACE_CONFIG=:4096:8 for this run (cuBLAS's deterministic workspace)");
}

}  // namespace

SweepOutcome run_sweep(const SweepRequest& request) {
  // Everything the user gave is checked before the database is touched.
  const Config config = load_config(request.config_path);
  // Op libraries are loaded and their mappings checked now: a missing file or
  // op, or a wrong mapping, is bad input (exit 2) before anything is stored.
  // A check process loads them first: one that crashes, hangs or exits while
  // loading is refused there, not discovered by this process dying.
  check_op_libraries_load(config.op_libraries);
  {
    ExitGuard guard("the loading of the op libraries", "nothing was stored", kExitBadInput);
    for (const auto& [name, spec] : config.op_libraries) {
      guard.set_activity("the loading of op library variant '" + name + "' (" + spec.library + ")");
      load_op_library_variant(spec);
    }
  }
  const Plan whole = make_plan(config);
  // A claim whose case cannot be planned is bad input now, before anything is stored.
  std::vector<ClaimMatch> claims = match_claims(config, whole);
  const Plan plan = request.shard ? shard_plan(whole, config.measure, request.shard->spec, request.config_path) : whole;
  prepare_for_determinism(whole);  // the whole sweep's: every shard's run then has the same env_vars
  if (request.gpus && request.device) {
    throw BadInputError("--gpus picks the devices itself; give --gpus or --device, not both");
  }
  const Device requested = request.device.value_or(config.device);
  if (request.gpus && requested.kind() == DeviceKind::cuda && requested.cuda_index() >= 0) {
    throw BadInputError("the config's device is " + requested.to_string() + "; --gpus needs device auto or cuda");
  }
  // With --isolate or --gpus the parent leaves CUDA alone: a worker answers the device questions.
  const bool workers = request.isolate || request.gpus.has_value();
  std::optional<DeviceProbe> probe;
  if (workers) probe = probe_device_in_worker(request.gpus && requested.kind() != DeviceKind::cpu ? Device::cuda() : requested);
  std::vector<Device> gpus;
  if (request.gpus) gpus = devices_for_gpus(*request.gpus, probe->environment.device, *probe);
  const Device device = probe ? probe->environment.device : resolve_device(requested);
  check_cases_fit(plan, device, probe ? probe->memory_bytes : device_memory_bytes(device), request.config_path);
  if (request.at_end) request.at_end->check(request.db_path);
  const std::string traces = trace_directory(request.traces_dir, config.measure.traces, request.db_path);
  const bool traces_created = !traces.empty() && !std::filesystem::exists(traces);
  if (!traces.empty()) create_trace_directory(traces);
  const std::string config_sha256 = sha256_hex(config.yaml_text);
  // The op libraries' files as they are before the run's builds are hashed.
  OpLibraryWatch libraries(config.op_libraries);

  std::optional<storage::Store> opened;
  try {
    // --resume continues a run in a database that exists: never create one for it.
    opened.emplace(request.db_path, request.resume         ? storage::Store::Open::existing
                                    : request.new_database ? storage::Store::Open::create_new
                                                           : storage::Store::Open::create_if_absent);
  } catch (...) {
    // A refused database leaves nothing behind: not even the trace folder made for it.
    std::error_code ignored;
    if (traces_created) std::filesystem::remove(traces, ignored);  // only if still empty
    throw;
  }
  storage::Store& store = *opened;
  const DatabaseFile database(request.db_path);
  SweepOutcome outcome;
  outcome.device = device;
  outcome.planned_cases = static_cast<int>(plan.cases.size());
  outcome.sweep_cases = static_cast<int>(whole.cases.size());
  outcome.traces_dir = traces;
  outcome.shard = request.shard;
  outcome.gpus = gpus;
  std::set<int> done;
  std::map<int, CaseStatus> stored_before;  // by plan index: counted as done by the progress display
  if (request.resume) {
    // Checked by reading only (an older schema through a migrated copy): a
    // refused resume leaves the database as it was. The claim migrates it.
    outcome.run_id = run_to_resume(storage::ReadableDatabase(request.db_path), *request.resume, request.config_path,
                                   config_sha256, device,
                                   request.shard ? std::optional<ShardSpec>(request.shard->spec) : std::nullopt,
                                   request.gpus.has_value(),
                                   request.sweep_id_given ? std::optional<std::string>(request.sweep_id) : std::nullopt,
                                   op_library_builds_of(config));
    // Claimed first (refused, exit 2, while another live process runs it), then
    // read: the last holder may have stored more cases before it stopped.
    store.claim_run(outcome.run_id);
    const storage::RunReader reader(request.db_path);
    done = reader.stored_plan_indexes(outcome.run_id);
    for (const storage::CaseRow& row : reader.cases(outcome.run_id)) stored_before[row.identity.plan_index] = row.status;
    if (!gpus.empty()) store.set_run_gpus(outcome.run_id, gpus_used(reader.run(outcome.run_id)->gpus, gpus));
    log::info("resuming run " + std::to_string(outcome.run_id) + ": " + std::to_string(done.size()) + " of " +
              std::to_string(plan.cases.size()) + " cases already stored");
    warn_if_resumed_on_another_gpu(request.db_path, outcome.run_id, probe ? probe->environment.gpu_uuid : gpu_uuid(device));
  } else {
    NewRun run{request.config_path, &config, config_sha256, device,
               probe ? std::optional<EnvironmentInfo>(probe->environment) : std::nullopt,
               outcome.planned_cases, outcome.sweep_cases, request.isolate, request.shard, request.sweep_id, gpus,
               std::move(claims)};
    outcome.run_id = begin_new_run(store, run);
  }

  const std::int64_t run_id = outcome.run_id;
  install_interrupt_handlers();
  // An exit() from code the sweep calls (an op library's op) must not end the
  // process with status 0 as if the sweep had finished: the guard marks the
  // run failed and ends with exit 1 and an error line instead.
  const std::string run_named = "run " + std::to_string(run_id) + " in " + request.db_path;
  ExitGuard exit_guard("the sweep of " + run_named,
                       "the cases finished before stay stored; continue with --resume " + std::to_string(run_id) +
                           " once the cause is fixed (--isolate turns such a case into a 'crashed' one)",
                       kExitRuntimeFailure, [&store, run_id, run_named] {
                         return store.finish_run(run_id, RunStatus::failed) ? run_named + " is marked failed"
                                                                            : run_named + " is held by another process";
                       });
  std::vector<PlannedCase> planned;
  for (const Case& c : plan.cases) planned.push_back({c.plan_index, expected_case_ns(c, config.measure)});
  try {
    // Ended (the live line erased, the last state logged) before anything else prints, even on a throw.
    ProgressDisplay progress(Progress(planned, stored_before), progress_mode_here(), request.progress_interval_seconds);
    libraries.expect(storage::RunReader(request.db_path).run(run_id)->op_libraries);
    const std::unique_ptr<Executor> executor =
        make_executor(request, config, gpus, device, config_sha256, run_id, libraries);
    run_cases(*executor, cases_to_run(plan, config, done, gpus.size(), traces, run_id), plan, store, database,
              request.db_path, run_id, progress, exit_guard);
  } catch (...) {
    // What was stored is published all the same: a failed job's partial results count.
    if (request.at_end) {
      try {
        request.at_end->ended(request.db_path, run_id);
      } catch (const std::exception& error) {
        log::error(error.what());
      }
    }
    throw;
  }
  outcome.status = interrupt_requested() ? RunStatus::interrupted : RunStatus::done;
  if (!store.finish_run(run_id, outcome.status)) throw ClaimLost(run_id);
  database.check_still_there();
  // Read while the store is still open: its connection, the last to close, then
  // folds the write-ahead log back, so no -wal or -shm file is left beside the database.
  outcome.cases = storage::RunReader(request.db_path).cases(run_id);
  if (request.at_end) request.at_end->ended(request.db_path, run_id);
  return outcome;
}

}  // namespace attnsweep::execute
