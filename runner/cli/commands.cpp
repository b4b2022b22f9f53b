#include "runner/cli/commands.hpp"

#include <filesystem>
#include <iostream>
#include <system_error>

#include "runner/cli/guarded.hpp"
#include "runner/cli/summary_table.hpp"
#include "runner/cli/worker.hpp"
#include "runner/common/interrupt.hpp"
#include "runner/common/text.hpp"
#include "runner/common/device_name.hpp"
#include "runner/common/errors.hpp"
#include "runner/common/log.hpp"
#include "runner/common/sha256.hpp"
#include "runner/config/config.hpp"
#include "runner/measure/case_runner.hpp"
#include "runner/measure/ceilings.hpp"
#include "runner/measure/device.hpp"
#include "runner/measure/environment.hpp"
#include "runner/measure/flops.hpp"
#include "runner/plan/plan.hpp"
#include "runner/profile/kineto_profiler.hpp"
#include "runner/variants/variant_names.hpp"
#include "storage/query.hpp"
#include "storage/store.hpp"

#include <memory>
#include <optional>
#include <set>

namespace attnsweep::cli {
namespace {

namespace fs = std::filesystem;

// How a CUDA sample is taken; the L2 flush is optional (runs.l2_flush).
std::string cupti_teardown_note() {
  const std::string kept = KinetoProfiler::cupti_kept_by_user();
  if (kept.empty()) return "; CUPTI torn down after every profiling session";
  return "; CUPTI left attached between profiling sessions (TEARDOWN_CUPTI=" + kept +
         "), host-side times after the first profile include its callbacks";
}

std::string cuda_timing_protocol(const MeasureSettings& measure) {
  return std::string("cuda_event_per_forward_v2: stream synchronized; ") +
         (measure.l2_flush ? "L2 flushed (memset of 2x L2 bytes, queued before the start event); " : "no L2 flush; ") +
         (measure.hide_launch_latency ? "stream held by a blocking kernel while the host enqueues " : "") +
         "start event, one forward, stop event" + (measure.hide_launch_latency ? ", then released" : "") +
         "; stop synchronized; SM clock read (NVML) and samples under throttle_fraction x max clock discarded; " +
         (measure.hide_launch_latency ? "launch latency outside the interval (inter-kernel gaps of the forward inside)"
                                      : "launch latency included") +
         (measure.cuda_graph ? "; also CUDA-graph replays of one captured forward, same protocol" : "") +
         cupti_teardown_note();
}
const char* const kCpuTimingProtocol = "steady_clock_per_forward_v1: wall time of one forward call on the CPU";

bool variant_runs_on(const VariantInfo& info, const std::string& device) {
  return is_cuda_device(device) ? info.runs_on_cuda : info.runs_on_cpu;
}

// Traces go to --traces DIR, or, when the config turns them on, next to the database.
std::string trace_directory(const RunOptions& options, const Config& config) {
  if (!options.traces_dir.empty()) return options.traces_dir;
  if (!config.measure.traces) return "";
  fs::path db(options.db_path);
  return (db.parent_path() / (db.stem().string() + "-traces")).string();
}

std::string safe_file_name(std::string text) {
  for (char& ch : text) {
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '-' && ch != '_' && ch != '.') ch = '_';
  }
  return text;
}

}  // namespace

namespace {

// Which earlier run --resume continues, after checking it may be continued.
std::int64_t run_to_resume(storage::Store& store, const RunOptions& options, const std::string& config_sha256,
                           const std::string& device) {
  std::optional<std::int64_t> wanted;
  if (options.resume_run != "latest") {
    try {
      std::size_t used = 0;
      wanted = std::stoll(options.resume_run, &used);
      if (used != options.resume_run.size()) throw std::invalid_argument("trailing");
    } catch (const std::exception&) {
      throw BadInputError("--resume takes a run id or 'latest', got '" + options.resume_run + "'");
    }
  }
  const auto run = store.find_run(wanted);
  if (!run) {
    throw BadInputError(options.db_path + ": no run " + (wanted ? std::to_string(*wanted) : std::string("at all")) +
                        " to resume; run without --resume to start one");
  }
  if (run->config_sha256 != config_sha256) {
    throw BadInputError("run " + std::to_string(run->run_id) + " was made from a different config (sha256 " +
                        run->config_sha256.substr(0, 12) + ", now " + config_sha256.substr(0, 12) + " for " +
                        options.config_path + "); resume with the same file, or start a new run without --resume");
  }
  if (run->device != device) {
    throw BadInputError("run " + std::to_string(run->run_id) + " ran on " + run->device + ", not " + device +
                        "; resume it on the same device (--device " + run->device + ")");
  }
  return run->run_id;
}

// Refuses cases whose inputs and output alone exceed the device's memory.
void check_cases_fit(const Plan& plan, const std::string& device, double available, const std::string& config_path) {
  for (const Case& c : plan.cases) {
    const double needed = forward_min_bytes(c.shape, c.dtype);
    if (needed > available) {
      throw BadInputError(config_path + ": case " + c.label() + " needs " + text::fixed(needed / (1 << 30), 1) +
                          " GiB for q, k, v and the output alone; " + device + " has " +
                          text::fixed(available / (1 << 30), 1) + " GiB. Use smaller shapes or exclude it");
    }
  }
}

std::string trace_file(const std::string& traces, std::int64_t run_id, const Case& c) {
  if (traces.empty()) return "";
  return (fs::path(traces) / safe_file_name("run" + std::to_string(run_id) + "-" + std::to_string(c.plan_index) +
                                             "-" + c.variant + "-" + c.shape.label() + "-" + c.dtype + ".json"))
      .string();
}

CaseResult failed_worker_result(const std::string& device, const cli::WorkerOutcome& outcome, const Case& c) {
  CaseResult result;
  result.status = outcome.kind == cli::WorkerOutcome::Kind::timed_out ? "timeout" : "crashed";
  result.error_message = outcome.detail;
  result.device = device;
  result.flops = forward_flops(c.shape, c.causal);
  result.min_bytes = forward_min_bytes(c.shape, c.dtype);
  return result;
}

// One `attnsweep run`: what it was asked, and where its results go.
struct Sweep {
  const RunOptions& options;
  const Config& config;
  const Plan& plan;
  std::string device;
  std::string traces;         // trace directory, empty when traces are off
  std::string config_sha256;
  storage::Store& store;
  std::int64_t run_id = 0;
  std::set<int> done;         // plan indexes already stored (--resume)
};

// A new run row: the environment (from the probe worker with --isolate), the
// device ceilings (not with --isolate: the parent runs no kernels) and the settings.
std::int64_t begin_new_run(const Sweep& sweep, const std::optional<cli::DeviceProbe>& probe) {
  const Config& config = sweep.config;
  log::info("collecting environment for " + sweep.device);
  storage::RunRecord record;
  record.name = config.name.empty() ? fs::path(sweep.options.config_path).stem().string() : config.name;
  record.description = config.description;
  record.config_path = sweep.options.config_path;
  record.config_yaml = config.yaml_text;
  record.config_sha256 = sweep.config_sha256;
  record.environment = probe ? probe->environment : collect_environment(sweep.device);
  record.seed = config.seed;
  const bool cuda = is_cuda_device(sweep.device);
  record.timing_protocol = cuda ? cuda_timing_protocol(config.measure) : kCpuTimingProtocol;
  if (cuda && !sweep.options.isolate) {
    log::info("measuring device ceilings (bf16 matmul, device-to-device copy)");
    const DeviceCeilings ceilings = measure_ceilings(sweep.device);
    record.ceiling_bf16_tflops = ceilings.bf16_tflops;
    record.ceiling_copy_gbps = ceilings.copy_gbps;
  }
  record.flop_convention = kFlopConvention;
  record.measure = config.measure;
  record.planned_cases = static_cast<int>(sweep.plan.cases.size());
  record.isolate = sweep.options.isolate;
  const std::int64_t run_id = sweep.store.begin_run(record);
  log::info("run " + std::to_string(run_id) + " '" + record.name + "': " + std::to_string(sweep.plan.cases.size()) +
            " cases on " + sweep.device + " (" + record.environment.device_name + ")" +
            (sweep.options.isolate ? ", one worker process per case" : ""));
  return run_id;
}

// Runs every case not stored yet, in the configured order, storing each as it
// finishes; stops early at an interrupt. Marks the run failed if anything throws.
void run_cases(const Sweep& sweep) {
  const Config& config = sweep.config;
  try {
    std::unique_ptr<CaseRunner> runner;  // in this process, unless --isolate
    const int total = static_cast<int>(sweep.plan.cases.size());
    for (const Case& c : execution_order(sweep.plan, config.measure.case_order, config.seed)) {
      if (sweep.done.count(c.plan_index)) continue;
      if (interrupt_requested()) break;
      log::info("[" + std::to_string(c.plan_index + 1) + "/" + std::to_string(total) + "] " + c.label());
      const std::string trace_path = trace_file(sweep.traces, sweep.run_id, c);
      if (sweep.options.isolate) {
        const cli::WorkerOutcome outcome = cli::run_case_in_worker(
            {sweep.options.config_path, sweep.config_sha256, sweep.options.db_path, sweep.run_id, c.plan_index,
             sweep.device, trace_path},
            config.measure.case_timeout_s);
        if (outcome.kind == cli::WorkerOutcome::Kind::interrupted) break;
        if (outcome.kind != cli::WorkerOutcome::Kind::finished) {
          const CaseResult result = failed_worker_result(sweep.device, outcome, c);
          sweep.store.add_case(sweep.run_id, c, result);
          log::warn("  " + one_line_result(c, result));
        }
        continue;
      }
      if (!runner) runner = std::make_unique<CaseRunner>(sweep.device, config.measure, config.seed);
      CaseResult result;
      try {
        result = runner->run(c, trace_path);
      } catch (const Interrupted&) {
        break;  // the case in flight is dropped; --resume redoes it
      }
      sweep.store.add_case(sweep.run_id, c, result);
      (result.status == "ok" ? log::info : log::warn)("  " + one_line_result(c, result));
      for (const auto& warning : result.warnings) log::warn("  " + warning);
      if (result.device_unusable) {
        throw std::runtime_error("the CUDA context of this process is unusable after " + c.label() +
                                 " (stored as 'error'); no later case can run here. Continue in a fresh process "
                                 "with --resume, and use --isolate for sweeps that may fault");
      }
    }
  } catch (...) {
    sweep.store.finish_run(sweep.run_id, "failed");
    throw;
  }
}

// The summary table, the run's final status, and how to go on from here.
int finish_run(const Sweep& sweep) {
  const RunOptions& options = sweep.options;
  const auto rows = sweep.store.load_cases(sweep.run_id);
  std::cout << "\n";
  print_summary_table(std::cout, rows);
  if (interrupt_requested()) {
    sweep.store.finish_run(sweep.run_id, "interrupted");
    std::cout << "\nrun " << sweep.run_id << " interrupted (signal " << interrupt_signal() << ") with " << rows.size()
              << " of " << sweep.plan.cases.size() << " cases stored in " << options.db_path << "\n"
              << "continue it with: attnsweep run " << options.config_path << " --db " << options.db_path
              << " --resume " << sweep.run_id << "\n";
    return interrupted_exit_code();
  }
  sweep.store.finish_run(sweep.run_id, "done");
  std::cout << "\nrun " << sweep.run_id << " stored in " << options.db_path << "\n"
            << "example: sqlite3 -header -column " << options.db_path
            << " \"SELECT variant, dtype, kernels_per_forward, time_us_median, tflops FROM results WHERE run_id = "
            << sweep.run_id << " ORDER BY time_us_median\"\n";
  if (!sweep.traces.empty()) std::cout << "traces: " << sweep.traces << " (open in https://ui.perfetto.dev)\n";
  return static_cast<int>(kExitOk);
}

}  // namespace

int run_command(const RunOptions& options) {
  return guarded("error: ", [&] {
    // Everything the user gave is checked before the database is touched.
    const Config config = load_config(options.config_path);
    const Plan plan = make_plan(config);
    const std::string requested = options.device.empty() ? config.device : options.device;
    // With --isolate the parent leaves CUDA alone: a worker answers the device questions.
    std::optional<cli::DeviceProbe> probe;
    if (options.isolate) probe = cli::probe_device_in_worker(requested);
    const std::string device = probe ? probe->environment.device : resolve_device(requested);
    check_cases_fit(plan, device, probe ? probe->memory_bytes : device_memory_bytes(device), options.config_path);
    const std::string traces = trace_directory(options, config);
    if (!traces.empty()) {
      std::error_code error;
      fs::create_directories(traces, error);
      if (error) throw BadInputError(traces + ": cannot create the trace directory: " + error.message());
    }
    storage::Store store(options.db_path);
    Sweep sweep{options, config, plan, device, traces, sha256_hex(config.yaml_text), store, 0, {}};
    if (options.resume) {
      sweep.run_id = run_to_resume(store, options, sweep.config_sha256, device);
      sweep.done = store.stored_plan_indexes(sweep.run_id);
      store.reopen_run(sweep.run_id);
      log::info("resuming run " + std::to_string(sweep.run_id) + ": " + std::to_string(sweep.done.size()) + " of " +
                std::to_string(plan.cases.size()) + " cases already stored");
    } else {
      sweep.run_id = begin_new_run(sweep, probe);
    }
    install_interrupt_handlers();
    run_cases(sweep);
    return finish_run(sweep);
  });
}

int query_command(const std::string& db_path, const std::string& sql) {
  return guarded("error: ", [&] {
    storage::print_query(db_path, sql, std::cout);
    return static_cast<int>(kExitOk);
  });
}

int plan_command(const std::string& config_path, const std::string& device_option) {
  return guarded("error: ", [&] {
    const Config config = load_config(config_path);
    const Plan plan = make_plan(config);
    const std::string requested = device_option.empty() ? config.device : device_option;
    check_device_name(requested);
    // Planning needs no GPU: "auto" and "cuda" are listed as they would run on a GPU.
    const std::string device = requested == "auto" ? resolve_device("auto") : requested;
    char line[256];
    const char* format = "%5s  %-15s %6s %6s %8s %10s %10s %8s  %-5s %-6s %s\n";
    std::snprintf(line, sizeof line, format, "#", "variant", "batch", "heads", "kv_heads", "seq_len_q",
                  "seq_len_kv", "head_dim", "dtype", "causal", "note");
    std::cout << line;
    for (const Case& c : plan.cases) {
      const VariantInfo* info = find_variant_info(c.variant);
      const std::string note = variant_runs_on(*info, device) ? "" : "unsupported on " + device;
      std::snprintf(line, sizeof line, format, std::to_string(c.plan_index).c_str(), c.variant.c_str(),
                    std::to_string(c.shape.batch).c_str(), std::to_string(c.shape.heads).c_str(),
                    std::to_string(c.shape.kv_heads).c_str(), std::to_string(c.shape.seq_len_q).c_str(),
                    std::to_string(c.shape.seq_len_kv).c_str(), std::to_string(c.shape.head_dim).c_str(),
                    c.dtype.c_str(), c.causal ? "yes" : "no", note.c_str());
      std::cout << line;
    }
    std::cout << plan.cases.size() << " cases";
    if (plan.excluded) std::cout << ", " << plan.excluded << " excluded";
    if (plan.duplicates) std::cout << ", " << plan.duplicates << " duplicates dropped";
    std::cout << " (" << config_path << ", device " << device << ")\n";
    return static_cast<int>(kExitOk);
  });
}

int variants_command(const std::string& device_option) {
  return guarded("error: ", [&] {
    const std::string device = resolve_device(device_option.empty() ? "auto" : device_option);
    char line[512];
    const char* format = "%-15s %-4s %-5s %-9s %s\n";
    std::snprintf(line, sizeof line, format, "variant", "cpu", "cuda", "runs here", "description");
    std::cout << line;
    for (const auto& info : variant_catalog()) {
      std::snprintf(line, sizeof line, format, info.name.c_str(), info.runs_on_cpu ? "yes" : "no",
                    info.runs_on_cuda ? "yes" : "no", variant_runs_on(info, device) ? "yes" : "no",
                    info.description.c_str());
      std::cout << line;
    }
    std::cout << "device: " << device << " (" << cuda_device_count() << " CUDA device(s) visible). "
              << "A backend can still refuse a dtype or shape; such cases are stored as 'unsupported'.\n";
    return static_cast<int>(kExitOk);
  });
}

}  // namespace attnsweep::cli
