#pragma once
// When to stop taking timed samples of one case: always at the sample cap or
// the time cap; never before min_samples and min_gpu_seconds of summed sample
// time; in between, when the convergence criterion (stopping_criterion.hpp,
// stdrel by default) says the estimate is good enough. The reason is stored
// with the case.
#include <memory>
#include <optional>

#include "runner/measure/running_statistics.hpp"
#include "runner/measure/stop_reason.hpp"
#include "runner/measure/stopping_criterion.hpp"
#include "runner/measure/stopping_settings.hpp"

namespace attnsweep {

class StoppingRule {
 public:
  // The criterion settings.criterion names.
  explicit StoppingRule(const StoppingSettings& settings);

  // Feed every kept sample (microseconds); ask after every sample, with the
  // wall time spent so far on timing.
  void add_sample(double value_us);
  bool should_stop(double elapsed_seconds);
  // A cap or the criterion's reason; empty while running.
  std::optional<StopReason> reason() const { return reason_; }
  double rel_stdev() const { return kept_.rel_stdev(); }
  int count() const { return kept_.count; }
  const StoppingCriterion& criterion() const { return *criterion_; }

 private:
  StoppingSettings settings_;
  std::unique_ptr<StoppingCriterion> criterion_;
  RunningStatistics kept_;  // microseconds
  std::optional<StopReason> reason_;
};

}  // namespace attnsweep
