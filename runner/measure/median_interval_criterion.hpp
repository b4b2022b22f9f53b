#pragma once
// The CUDA-graph replays' criterion: converged once the median is known well
// enough, i.e. the half-width of its distribution-free 95% confidence interval
// (statistics.hpp, the cases' graph median_ci) relative to the median is at or
// under target_median_ci_rel. Replays have no host gaps and spread less than
// eager forwards, so a precise median needs far fewer of them than the eager
// minimum of summed time would take (issue 35: the same rule for both took as
// many replays as eager samples, 13.5 of a 44.5 s sweep).
#include <vector>

#include "runner/measure/stopping_criterion.hpp"

namespace attnsweep {

class MedianIntervalCriterion : public StoppingCriterion {
 public:
  static constexpr const char* kName = "median_ci";
  // The exact interval costs O(n) to find; past this many samples it is looked
  // at every kLookEvery samples only (at most kLookEvery - 1 more than needed).
  static constexpr int kLookEveryFrom = 64;
  static constexpr int kLookEvery = 8;

  explicit MedianIntervalCriterion(const StoppingSettings& settings) : target_(settings.target_median_ci_rel) {}

  std::string name() const override { return kName; }
  std::vector<NamedParameter> parameters() const override { return {{"target_median_ci_rel", target_}}; }
  void add_sample(double value_us) override;
  bool is_finished() override;
  std::optional<StopReason> reason() const override { return reason_; }

 private:
  double target_;
  std::vector<double> sorted_;  // the kept samples, in order of value
  std::optional<StopReason> reason_;
};

}  // namespace attnsweep
