#include "runner/measure/stdrel_criterion.hpp"

#include <algorithm>

namespace attnsweep {

std::vector<NamedParameter> StdrelCriterion::parameters() const {
  return {{"target_rel_stdev", target_rel_stdev_},
          {"noise_window", kNoiseWindow},
          {"noise_looks", kNoiseLooks},
          {"noise_spread", kNoiseSpread}};
}

bool StdrelCriterion::is_finished() {
  const double noise = kept_.rel_stdev();
  if (noise <= target_rel_stdev_) {
    reason_ = StopReason::target_rel_stdev;
  } else if (kept_.count % kNoiseWindow == 0) {
    noise_history_.push_back(noise);
    if (noise_history_.size() >= static_cast<std::size_t>(kNoiseLooks)) {
      const auto last = noise_history_.end() - kNoiseLooks;
      const auto [low, high] = std::minmax_element(last, noise_history_.end());
      double mean = 0;
      for (auto it = last; it != noise_history_.end(); ++it) mean += *it / kNoiseLooks;
      if ((*high - *low) <= kNoiseSpread * mean) reason_ = StopReason::noise_converged;
    }
  }
  return reason_.has_value();
}

}  // namespace attnsweep
