#include "runner/compare/environment_differences.hpp"

#include <map>
#include <set>
#include <variant>

#include "runner/compare/value_text.hpp"
#include "runner/storage/query.hpp"

namespace attnsweep::compare {
namespace {

using storage::RunRow;

std::string as_text(const std::string& value) { return value; }
std::string as_text(const std::optional<double>& value) { return value ? number_text(*value) : ""; }
std::string as_text(const storage::QueryValue& value) {
  if (std::holds_alternative<std::int64_t>(value)) return std::to_string(std::get<std::int64_t>(value));
  if (std::holds_alternative<double>(value)) return number_text(std::get<double>(value));
  if (std::holds_alternative<std::string>(value)) return std::get<std::string>(value);
  return "";
}

// A fact of RunRow, by member.
struct RunFact {
  const char* name;
  std::string (*read)(const RunRow&);
  bool breaks_timing = false;
  bool gpu_only = false;  // a fact of the GPU and its timing: nothing on a CPU run (gpu_facts)
};

// A member of RunRow by the name of its column, written once.
#define ATTNSWEEP_RUN_FACT(member, breaks_timing) \
  RunFact { #member, [](const RunRow& run) { return as_text(run.member); }, breaks_timing }
#define ATTNSWEEP_GPU_FACT(member, breaks_timing) \
  RunFact { #member, [](const RunRow& run) { return as_text(run.member); }, breaks_timing, true }

// Every fact of a run that can explain a difference of results, in the order
// they are reported: the machine and software first, then how it measured.
const std::vector<RunFact>& run_facts() {
  static const std::vector<RunFact> facts = {
      {"device", [](const RunRow& run) { return run.device.to_string(); }, false},
      ATTNSWEEP_RUN_FACT(device_name, false),
      ATTNSWEEP_RUN_FACT(driver_version, false),
      ATTNSWEEP_RUN_FACT(cuda_version, false),
      ATTNSWEEP_RUN_FACT(cudnn_version, false),
      ATTNSWEEP_RUN_FACT(torch_version, false),
      ATTNSWEEP_RUN_FACT(attnsweep_version, false),
      ATTNSWEEP_RUN_FACT(git_sha, false),
      ATTNSWEEP_RUN_FACT(container_image, false),
      ATTNSWEEP_RUN_FACT(op_libraries, false),
      ATTNSWEEP_RUN_FACT(hostname, false),
      ATTNSWEEP_RUN_FACT(timing_protocol, true),
      ATTNSWEEP_GPU_FACT(measure_regime, true),
      ATTNSWEEP_RUN_FACT(flop_convention, false),
      ATTNSWEEP_RUN_FACT(config_sha256, false),
      ATTNSWEEP_GPU_FACT(power_limit_w, false),
      {"sm_clock_max_mhz",  // locked application clocks lower it
       [](const RunRow& run) { return run.sm_clock_max_mhz ? std::to_string(*run.sm_clock_max_mhz) : std::string(); }, false,
       true},
      ATTNSWEEP_GPU_FACT(sm_clock_start_mhz, false),
      ATTNSWEEP_GPU_FACT(mem_clock_start_mhz, false),
      ATTNSWEEP_GPU_FACT(temperature_start_c, false),
      {"seed", [](const RunRow& run) { return std::to_string(run.seed); }, false},
      {"isolate", [](const RunRow& run) { return std::string(run.isolate ? "1" : "0"); }, false},
      {"case_order", [](const RunRow& run) { return std::string(to_string(run.case_order)); }, false},
      ATTNSWEEP_RUN_FACT(gpus, false),
  };
  return facts;
}

#undef ATTNSWEEP_RUN_FACT
#undef ATTNSWEEP_GPU_FACT

// Columns of `runs` that RunRow does not hold: the protocol settings, read by
// name with a read-only query.
const std::vector<std::string>& protocol_columns() {
  static const std::vector<std::string> columns = {
      "l2_flush",   "cuda_graph",        "hide_launch_latency", "throttle_fraction", "min_gpu_seconds",
      "warmup",     "profiled_forwards", "min_samples",         "max_samples",       "target_rel_stdev",
      "max_case_seconds", "burst_cooldown_max_ms", "clock_event_reasons_start"};
  return columns;
}

// The protocol settings of the burst regime and the GPU's state at the start: like the
// GPU facts of run_facts(), nothing on a CPU run.
bool gpu_only_column(const std::string& column) {
  return column == "burst_cooldown_max_ms" || column == "clock_event_reasons_start";
}

std::map<std::string, std::string> protocol_settings(const std::string& path, std::int64_t run_id) {
  std::map<std::string, std::string> settings;
  std::vector<std::string> names;
  storage::run_query(
      path, "SELECT * FROM runs WHERE run_id = " + std::to_string(run_id),
      [&](const std::vector<std::string>& columns) { names = columns; },
      [&](const std::vector<storage::QueryValue>& row) {
        for (std::size_t i = 0; i < row.size() && i < names.size(); ++i) settings[names[i]] = as_text(row[i]);
      });
  return settings;
}

}  // namespace

std::vector<EnvironmentDifference> environment_differences(const ComparedRun& baseline, const ComparedRun& candidate) {
  std::vector<EnvironmentDifference> differences;
  const auto add = [&](const std::string& fact, const std::string& a, const std::string& b, bool breaks_timing) {
    if (a != b) differences.push_back({fact, a, b, breaks_timing});
  };
  // Where either run is on the CPU, the GPU's facts are not compared: no CPU sample waits
  // for a cool-down, so the regime does not move a CPU time, and a CPU run has no power
  // limit or clocks. CPU runs stored before issue 55 hold the config's regime (`burst` in the
  // saved databases of schemas 7-10, with a GPU's power limit and clock too): compared, they
  // made every later CPU night INCONCLUSIVE. Different kinds of device are a warning of their own.
  const bool on_cpu = baseline.run.device.is_cpu() || candidate.run.device.is_cpu();
  for (const RunFact& fact : run_facts()) {
    if (on_cpu && fact.gpu_only) continue;
    add(fact.name, fact.read(baseline.run), fact.read(candidate.run), fact.breaks_timing);
  }
  const auto base_settings = protocol_settings(baseline.path, baseline.run.run_id);
  const auto cand_settings = protocol_settings(candidate.path, candidate.run.run_id);
  const auto setting = [](const std::map<std::string, std::string>& settings, const std::string& name) {
    const auto found = settings.find(name);
    return found == settings.end() ? std::string() : found->second;
  };
  for (const std::string& column : protocol_columns()) {
    if (on_cpu && gpu_only_column(column)) continue;
    add(column, setting(base_settings, column), setting(cand_settings, column), false);
  }
  // env_vars key by key: a variable set on one side only shows as "(unset)" on
  // the other. A run from before schema 7 has no env_vars at all (NULL): nothing
  // is known about its variables, which is one difference, not "(unset)" each.
  if (baseline.run.env_vars.empty() != candidate.run.env_vars.empty()) {
    const auto shown = [](const std::string& text) { return text.empty() ? std::string("(not recorded)") : text; };
    differences.push_back({"env_vars", shown(baseline.run.env_vars), shown(candidate.run.env_vars), false});
    return differences;
  }
  const auto base_variables = storage::env_vars_of(baseline.run.env_vars);
  const auto cand_variables = storage::env_vars_of(candidate.run.env_vars);
  std::set<std::string> names;
  for (const auto& entry : base_variables) names.insert(entry.first);
  for (const auto& entry : cand_variables) names.insert(entry.first);
  for (const std::string& name : names) {
    const auto a = base_variables.find(name), b = cand_variables.find(name);
    const std::string a_text = a == base_variables.end() ? "" : a->second;
    const std::string b_text = b == cand_variables.end() ? "" : b->second;
    const bool both_set = a != base_variables.end() && b != cand_variables.end();
    if (a_text != b_text || !both_set) {
      differences.push_back({name.empty() ? "env_vars" : "env_vars." + name,
                             a == base_variables.end() ? "(unset)" : a_text,
                             b == cand_variables.end() ? "(unset)" : b_text, false});
    }
  }
  return differences;
}

}  // namespace attnsweep::compare
