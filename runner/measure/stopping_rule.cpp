#include "runner/measure/stopping_rule.hpp"

namespace attnsweep {

StoppingRule::StoppingRule(const StoppingSettings& settings)
    : settings_(settings), criterion_(make_stopping_criterion(settings)) {}

void StoppingRule::add_sample(double value_us) {
  kept_.add(value_us);
  criterion_->add_sample(value_us);
}

bool StoppingRule::should_stop(double elapsed_seconds) {
  if (kept_.count >= settings_.max_samples) {
    reason_ = StopReason::max_samples;
  } else if (elapsed_seconds >= settings_.max_case_seconds && kept_.count >= 1) {
    // The time cap wins over min_samples: a very slow case must not stall the sweep.
    reason_ = StopReason::max_case_seconds;
  } else if (kept_.count >= settings_.min_samples && kept_.total * 1e-6 >= settings_.min_gpu_seconds) {
    if (criterion_->is_finished()) reason_ = criterion_->reason();
  }
  return reason_.has_value();
}

}  // namespace attnsweep
