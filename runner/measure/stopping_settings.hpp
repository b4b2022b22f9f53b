#pragma once
// The measure settings that decide when a case's sampling stops, apart from the
// rest of MeasureSettings so the stopping rule and every criterion read only these.
#include <string>

#include "runner/config/measure_settings.hpp"

namespace attnsweep {

// Defaults: docs/config.md.
struct StoppingSettings {
  int min_samples = 10;
  int max_samples = 2000;
  double target_rel_stdev = 0.02;
  double max_case_seconds = 10.0;
  double min_gpu_seconds = 0.05;
  // The convergence criterion by its registered name (stopping_criteria.cpp):
  // stdrel for eager samples, median_ci for CUDA-graph replays.
  std::string criterion = "stdrel";
  double target_median_ci_rel = 0.005;  // median_ci's target

  // The eager samples' rule.
  static StoppingSettings from(const MeasureSettings& measure) {
    return {measure.min_samples, measure.max_samples, measure.target_rel_stdev, measure.max_case_seconds,
            measure.min_gpu_seconds};
  }
  // The CUDA-graph replays' rule: the same caps and least count, no least summed
  // time, converged on the median's interval (median_interval_criterion.hpp).
  static StoppingSettings for_graph_replays(const MeasureSettings& measure) {
    StoppingSettings settings = from(measure);
    settings.min_gpu_seconds = 0;
    settings.criterion = "median_ci";
    settings.target_median_ci_rel = measure.graph_target_median_ci;
    return settings;
  }
};

}  // namespace attnsweep
