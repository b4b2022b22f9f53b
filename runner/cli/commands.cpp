#include "runner/cli/commands.hpp"

#include <filesystem>
#include <iostream>
#include <system_error>

#include "runner/cli/summary_table.hpp"
#include "runner/common/device_name.hpp"
#include "runner/common/errors.hpp"
#include "runner/common/log.hpp"
#include "runner/common/sha256.hpp"
#include "runner/config/config.hpp"
#include "runner/measure/case_runner.hpp"
#include "runner/measure/device.hpp"
#include "runner/measure/environment.hpp"
#include "runner/measure/flops.hpp"
#include "runner/plan/plan.hpp"
#include "runner/variants/variant_names.hpp"
#include "storage/store.hpp"

namespace attnsweep::cli {
namespace {

namespace fs = std::filesystem;

const char* const kCudaTimingProtocol =
    "cuda_event_per_forward_v1: stream synchronized, event, one forward, event, event synchronized; "
    "no L2 flush; launch latency included";
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

template <typename Body>
int guarded(Body body) {
  try {
    return body();
  } catch (const BadInputError& error) {
    std::cerr << "error: " << error.what() << "\n";
    return kExitBadInput;
  } catch (const std::exception& error) {
    std::cerr << "error: " << error.what() << "\n";
    return kExitRuntimeFailure;
  }
}

}  // namespace

int run_command(const RunOptions& options) {
  return guarded([&] {
    // Everything the user gave is checked before the database is touched.
    const Config config = load_config(options.config_path);
    const Plan plan = make_plan(config);
    const std::string device = resolve_device(options.device.empty() ? config.device : options.device);
    const std::string traces = trace_directory(options, config);
    if (!traces.empty()) {
      std::error_code error;
      fs::create_directories(traces, error);
      if (error) throw BadInputError(traces + ": cannot create the trace directory: " + error.message());
    }
    storage::Store store(options.db_path);

    log::info("collecting environment for " + device);
    storage::RunRecord record;
    record.name = config.name.empty() ? fs::path(options.config_path).stem().string() : config.name;
    record.description = config.description;
    record.config_path = options.config_path;
    record.config_yaml = config.yaml_text;
    record.config_sha256 = sha256_hex(config.yaml_text);
    record.environment = collect_environment(device);
    record.seed = config.seed;
    record.timing_protocol = is_cuda_device(device) ? kCudaTimingProtocol : kCpuTimingProtocol;
    record.flop_convention = kFlopConvention;
    record.measure = config.measure;
    record.planned_cases = static_cast<int>(plan.cases.size());
    const std::int64_t run_id = store.begin_run(record);
    log::info("run " + std::to_string(run_id) + " '" + record.name + "': " + std::to_string(plan.cases.size()) +
              " cases on " + device + " (" + record.environment.device_name + ")");

    std::vector<std::pair<Case, CaseResult>> rows;
    try {
      CaseRunner runner(device, config.measure, config.seed);
      const int total = static_cast<int>(plan.cases.size());
      for (const Case& c : plan.cases) {
        std::string trace_path;
        if (!traces.empty()) {
          trace_path = (fs::path(traces) / safe_file_name("run" + std::to_string(run_id) + "-" +
                                                          std::to_string(c.plan_index) + "-" + c.variant + "-" +
                                                          c.shape.label() + "-" + c.dtype + ".json"))
                           .string();
        }
        log::info("[" + std::to_string(c.plan_index + 1) + "/" + std::to_string(total) + "] " + c.label());
        CaseResult result = runner.run(c, trace_path);
        store.add_case(run_id, c, result);
        (result.status == "ok" ? log::info : log::warn)("  " + one_line_result(c, result));
        for (const auto& warning : result.warnings) log::warn("  " + warning);
        rows.emplace_back(c, std::move(result));
      }
    } catch (...) {
      store.finish_run(run_id, "failed");
      throw;
    }
    store.finish_run(run_id, "done");

    std::cout << "\n";
    print_summary_table(std::cout, rows);
    std::cout << "\nrun " << run_id << " stored in " << options.db_path << "\n"
              << "example: sqlite3 -header -column " << options.db_path
              << " \"SELECT variant, dtype, kernels_per_forward, time_us_median, tflops FROM results WHERE run_id = "
              << run_id << " ORDER BY time_us_median\"\n";
    if (!traces.empty()) std::cout << "traces: " << traces << " (open in https://ui.perfetto.dev)\n";
    return static_cast<int>(kExitOk);
  });
}

int plan_command(const std::string& config_path, const std::string& device_option) {
  return guarded([&] {
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
  return guarded([&] {
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
