#pragma once
// nvbench's stdrel criterion, as attnsweep has always stopped: converged once
// the relative standard deviation of the kept samples is under
// target_rel_stdev, or once that noise estimate has stopped moving (five looks,
// ten samples apart, within 5% of their mean: more samples would not make it
// tighter; docs/measurement.md, "Timing").
#include <vector>

#include "runner/measure/running_statistics.hpp"
#include "runner/measure/stopping_criterion.hpp"

namespace attnsweep {

class StdrelCriterion : public StoppingCriterion {
 public:
  static constexpr const char* kName = "stdrel";
  static constexpr int kNoiseWindow = 10;        // samples between two looks at the noise
  static constexpr int kNoiseLooks = 5;          // the last looks must agree ...
  static constexpr double kNoiseSpread = 0.05;   // ... within 5% of their mean

  explicit StdrelCriterion(const StoppingSettings& settings) : target_rel_stdev_(settings.target_rel_stdev) {}

  std::string name() const override { return kName; }
  std::vector<NamedParameter> parameters() const override;
  void add_sample(double value_us) override { kept_.add(value_us); }
  bool is_finished() override;
  std::optional<StopReason> reason() const override { return reason_; }

 private:
  double target_rel_stdev_;
  RunningStatistics kept_;
  std::vector<double> noise_history_;  // rel_stdev every kNoiseWindow samples once the minimums are met
  std::optional<StopReason> reason_;
};

}  // namespace attnsweep
