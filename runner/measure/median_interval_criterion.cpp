#include "runner/measure/median_interval_criterion.hpp"

#include <algorithm>

#include "runner/measure/statistics.hpp"

namespace attnsweep {

void MedianIntervalCriterion::add_sample(double value_us) {
  sorted_.insert(std::upper_bound(sorted_.begin(), sorted_.end(), value_us), value_us);
}

bool MedianIntervalCriterion::is_finished() {
  const int count = static_cast<int>(sorted_.size());
  if (count >= kLookEveryFrom && count % kLookEvery != 0) return false;
  const std::optional<double> half_width = median_ci_rel_sorted(sorted_);
  if (half_width && *half_width <= target_) reason_ = StopReason::median_ci;
  return reason_.has_value();
}

}  // namespace attnsweep
