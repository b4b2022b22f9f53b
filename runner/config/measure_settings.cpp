#include "runner/config/measure_settings.hpp"

namespace attnsweep {

std::vector<std::string> MeasureSettings::keys() {
  return {"warmup",           "profiled_forwards", "max_profile_attempts", "min_samples",
          "max_samples",      "target_rel_stdev",  "max_case_seconds",     "accuracy_check",
          "traces",           "case_timeout_s",    "min_gpu_seconds",      "l2_flush",
          "cuda_graph",       "throttle_fraction", "hide_launch_latency",  "case_order",
          "regime",           "burst_cooldown_max_ms", "burst_cooldown_case_max_s",
          "burst_cooldown_run_max_s", "energy_window_ms", "graph_target_median_ci", "counters"};
}

}  // namespace attnsweep
