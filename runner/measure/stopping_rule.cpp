#include "runner/measure/stopping_rule.hpp"

#include <cmath>

namespace attnsweep {

void StoppingRule::add_sample(double value_us) {
  ++count_;
  const double delta = value_us - mean_;
  mean_ += delta / count_;
  m2_ += delta * (value_us - mean_);
}

double StoppingRule::rel_stdev() const {
  if (count_ < 2 || mean_ <= 0) return INFINITY;
  return std::sqrt(m2_ / (count_ - 1)) / mean_;
}

bool StoppingRule::should_stop(double elapsed_seconds) {
  if (count_ >= settings_.max_samples) {
    reason_ = "max_samples";
  } else if (elapsed_seconds >= settings_.max_case_seconds && count_ >= 1) {
    // The time cap wins over min_samples: a very slow case must not stall the sweep.
    reason_ = "max_case_seconds";
  } else if (count_ >= settings_.min_samples && rel_stdev() <= settings_.target_rel_stdev) {
    reason_ = "target_rel_stdev";
  }
  return !reason_.empty();
}

}  // namespace attnsweep
