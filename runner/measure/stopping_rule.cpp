#include "runner/measure/stopping_rule.hpp"

#include <algorithm>
#include <cmath>

namespace attnsweep {
namespace {
constexpr int kNoiseWindow = 10;       // samples between two looks at the noise
constexpr std::size_t kNoiseLooks = 5; // the last looks must agree ...
constexpr double kNoiseSpread = 0.05;  // ... within 5% of their mean
}  // namespace

void StoppingRule::add_sample(double value_us) {
  ++count_;
  const double delta = value_us - mean_;
  mean_ += delta / count_;
  m2_ += delta * (value_us - mean_);
  total_us_ += value_us;
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
  } else if (count_ >= settings_.min_samples && total_us_ * 1e-6 >= settings_.min_gpu_seconds) {
    const double noise = rel_stdev();
    if (noise <= settings_.target_rel_stdev) {
      reason_ = "target_rel_stdev";
    } else if (count_ % kNoiseWindow == 0) {
      noise_history_.push_back(noise);
      if (noise_history_.size() >= kNoiseLooks) {
        const auto last = noise_history_.end() - kNoiseLooks;
        const auto [low, high] = std::minmax_element(last, noise_history_.end());
        double mean = 0;
        for (auto it = last; it != noise_history_.end(); ++it) mean += *it / kNoiseLooks;
        if ((*high - *low) <= kNoiseSpread * mean) reason_ = "noise_converged";
      }
    }
  }
  return !reason_.empty();
}

}  // namespace attnsweep
