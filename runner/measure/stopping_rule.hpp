#pragma once
// When to stop taking timed samples of one case, after nvbench's stdrel: at
// least min_samples and min_gpu_seconds of summed sample time; then stop once
// the relative standard deviation is under the target, or once it has stopped
// moving (more samples would not make the estimate tighter); and always at the
// time cap or the sample cap. The reason is stored with the case.
#include <string>
#include <vector>

#include "runner/config/measure_settings.hpp"

namespace attnsweep {

// The part of the measure settings the rule reads (defaults: docs/config.md).
struct StoppingSettings {
  int min_samples = 10;
  int max_samples = 2000;
  double target_rel_stdev = 0.02;
  double max_case_seconds = 10.0;
  double min_gpu_seconds = 0.05;

  static StoppingSettings from(const MeasureSettings& measure) {
    return {measure.min_samples, measure.max_samples, measure.target_rel_stdev, measure.max_case_seconds,
            measure.min_gpu_seconds};
  }
};

class StoppingRule {
 public:
  explicit StoppingRule(const StoppingSettings& settings) : settings_(settings) {}

  // Feed every sample (microseconds) and the wall time spent so far on timing.
  void add_sample(double value_us);
  bool should_stop(double elapsed_seconds);
  // "target_rel_stdev", "noise_converged", "max_case_seconds" or "max_samples"; empty while running.
  const std::string& reason() const { return reason_; }
  double rel_stdev() const;
  int count() const { return count_; }

 private:
  StoppingSettings settings_;
  int count_ = 0;
  double mean_ = 0, m2_ = 0;  // Welford's running variance
  double total_us_ = 0;
  std::vector<double> noise_history_;  // rel_stdev every kNoiseWindow samples once the minimums are met
  std::string reason_;
};

}  // namespace attnsweep
