#include "runner/config/measure_reader.hpp"

#include "runner/common/identities.hpp"
#include "runner/common/text.hpp"
#include "runner/config/yaml_reader.hpp"
#include "runner/common/hardware_counter.hpp"

namespace attnsweep {
namespace {

// measure.energy_window_ms at most: a minute of back-to-back passes per case is
// far past what the counter needs; more is a unit mistake (seconds for ms).
constexpr double kMaxEnergyWindowMs = 60000;

class MeasureReader : public YamlReader {
 public:
  using YamlReader::YamlReader;

  MeasureSettings measure(const YAML::Node& node) const {
    if (!node.IsMap()) fail(node, "measure", "expected a mapping with keys " + text::join(MeasureSettings::keys(), ", "));
    check_keys(node, "measure", MeasureSettings::keys());
    MeasureSettings settings;
    auto count = [&](const char* key, int& target, int minimum, int maximum) {
      if (node[key]) target = static_cast<int>(integer(node[key], std::string("measure.") + key, minimum, maximum));
    };
    count("warmup", settings.warmup, 0, 100000);
    count("profiled_forwards", settings.profiled_forwards, 1, 1000);
    count("max_profile_attempts", settings.max_profile_attempts, 1, 100);
    count("min_samples", settings.min_samples, 1, 10000000);
    count("max_samples", settings.max_samples, 1, 10000000);
    if (node["target_rel_stdev"]) settings.target_rel_stdev = number(node["target_rel_stdev"], "measure.target_rel_stdev", 0);
    if (node["max_case_seconds"]) settings.max_case_seconds = number(node["max_case_seconds"], "measure.max_case_seconds", 0);
    if (node["accuracy_check"]) settings.accuracy_check = boolean(node["accuracy_check"], "measure.accuracy_check");
    if (node["traces"]) settings.traces = boolean(node["traces"], "measure.traces");
    if (node["case_timeout_s"]) settings.case_timeout_s = number(node["case_timeout_s"], "measure.case_timeout_s", 0);
    if (node["min_gpu_seconds"]) settings.min_gpu_seconds = number(node["min_gpu_seconds"], "measure.min_gpu_seconds", 0, true);
    if (node["l2_flush"]) settings.l2_flush = boolean(node["l2_flush"], "measure.l2_flush");
    if (node["cuda_graph"]) settings.cuda_graph = boolean(node["cuda_graph"], "measure.cuda_graph");
    if (node["graph_target_median_ci"]) {
      settings.graph_target_median_ci = number(node["graph_target_median_ci"], "measure.graph_target_median_ci", 0);
    }
    if (node["hide_launch_latency"]) {
      settings.hide_launch_latency = boolean(node["hide_launch_latency"], "measure.hide_launch_latency");
    }
    if (node["throttle_fraction"]) {
      settings.throttle_fraction = number(node["throttle_fraction"], "measure.throttle_fraction", 0, true);
      if (settings.throttle_fraction >= 1) {
        fail(node["throttle_fraction"], "measure.throttle_fraction", "must be at least 0 and under 1, got " + node["throttle_fraction"].Scalar());
      }
    }
    if (node["case_order"]) {
      settings.case_order = spelled(node["case_order"], "measure.case_order", "order", parse_case_order, case_order_names());
    }
    if (node["regime"]) {
      settings.regime = spelled(node["regime"], "measure.regime", "regime", parse_measure_regime, measure_regime_names());
    }
    if (node["burst_cooldown_max_ms"]) {
      settings.burst_cooldown_max_ms = number(node["burst_cooldown_max_ms"], "measure.burst_cooldown_max_ms", 0);
    }
    if (node["burst_cooldown_case_max_s"]) {
      settings.burst_cooldown_case_max_s =
          number(node["burst_cooldown_case_max_s"], "measure.burst_cooldown_case_max_s", 0);
    }
    if (node["burst_cooldown_run_max_s"]) {
      settings.burst_cooldown_run_max_s = number(node["burst_cooldown_run_max_s"], "measure.burst_cooldown_run_max_s", 0);
    }
    if (node["energy_window_ms"]) {
      settings.energy_window_ms = number(node["energy_window_ms"], "measure.energy_window_ms", 0, true);
      if (settings.energy_window_ms > kMaxEnergyWindowMs) {
        fail(node["energy_window_ms"], "measure.energy_window_ms",
             "must be 0 (off) or at most " + text::fixed(kMaxEnergyWindowMs, 0) + " (a minute per case), got " +
                 node["energy_window_ms"].Scalar());
      }
    }
    if (node["counters"] && !(node["counters"].IsSequence() && node["counters"].size() == 0)) {
      settings.counters = names(node["counters"], "measure.counters", counter_names());
    }
    if (settings.max_samples < settings.min_samples) {
      fail(node["max_samples"] ? node["max_samples"] : node, "measure.max_samples",
           "must be at least measure.min_samples (" + std::to_string(settings.min_samples) + ")");
    }
    return settings;
  }

 private:
  // A setting that is one of an enum's spellings: its value, or a failure saying
  // "unknown <what> '<value>'; allowed: <names>".
  template <typename Enum>
  Enum spelled(const YAML::Node& value, const std::string& key, const std::string& what,
               std::optional<Enum> (*parse)(const std::string&), const std::vector<std::string>& names) const {
    const std::string spelling = scalar_string(value, key);
    const std::optional<Enum> parsed = parse(spelling);
    if (!parsed) fail(value, key, "unknown " + what + " '" + spelling + "'; allowed: " + text::join(names, ", "));
    return *parsed;
  }
};

}  // namespace

MeasureSettings read_measure_settings(const std::string& source, const YAML::Node& node) {
  return MeasureReader(source).measure(node);
}

std::string counters_warning(const MeasureSettings& measure, const Device& device) {
  if (measure.counters.empty() || !device.is_cpu()) return "";
  return "measure.counters: hardware counters are read on a CUDA device only; on " + device.to_string() +
         " no counter pass runs (each case stores why in cases.counters_why_not)";
}

}  // namespace attnsweep
