#pragma once
// When to stop taking timed samples of one case: at least min_samples, then
// stop once the relative standard deviation is under the target, or the time
// cap or the sample cap is reached. The reason is stored with the case.
#include <string>

#include "runner/config/measure_settings.hpp"

namespace attnsweep {

class StoppingRule {
 public:
  explicit StoppingRule(const MeasureSettings& settings) : settings_(settings) {}

  // Feed every sample (microseconds) and the wall time spent so far on timing.
  void add_sample(double value_us);
  bool should_stop(double elapsed_seconds);
  // "target_rel_stdev", "max_case_seconds" or "max_samples"; empty while running.
  const std::string& reason() const { return reason_; }
  double rel_stdev() const;
  int count() const { return count_; }

 private:
  MeasureSettings settings_;
  int count_ = 0;
  double mean_ = 0, m2_ = 0;  // Welford's running variance
  std::string reason_;
};

}  // namespace attnsweep
