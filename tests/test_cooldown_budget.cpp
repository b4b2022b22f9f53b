// The burst regime's cool-down allowances (issue 21, item 4): a GPU that never
// cools (another process keeps it capped) made every sample wait its full
// cool-down, a 7 s night took 243 s. With a timer whose clock never comes back,
// the case's and the run's allowances bound the waiting, and the case says when
// they ran out. (The real Timer::cool_down needs NVML; this one stands in for it.)
#include <gtest/gtest.h>

#include <string>

#include "runner/measure/sampling.hpp"

namespace attnsweep {
namespace {

// A timer whose GPU never cools down: every cool-down waits as long as it may.
class NeverCoolingTimer : public Timer {
 public:
  TimingSample time(const std::function<void()>& forward) override {
    forward();
    TimingSample sample;
    sample.gpu_time_us = 100.0;
    return sample;
  }
  std::string name() const override { return "fake"; }
  double cool_down(double max_seconds) override {
    waited += max_seconds;
    return max_seconds;
  }
  double waited = 0;
};

SamplingSettings burst_settings(int samples, CooldownBudget* budget) {
  SamplingSettings settings;
  settings.stopping.min_samples = samples;
  settings.stopping.max_samples = samples;
  settings.stopping.max_case_seconds = 60;
  settings.stopping.min_gpu_seconds = 0;
  settings.regime = MeasureRegime::burst;
  settings.burst_cooldown_max_s = 0.5;
  settings.cooldown_budget = budget;
  return settings;
}

TEST(CooldownBudget, TheCasesAllowanceBoundsItsCoolDownAndTheCaseSaysWhenItRanOut) {
  NeverCoolingTimer timer;
  double run_left = 100;
  CooldownBudget budget{1.2, &run_left};
  CaseResult result;
  const auto kept = sample_until_stop(timer, [] {}, SampleMode::eager, burst_settings(10, &budget), result);
  EXPECT_EQ(kept.size(), 10u);
  EXPECT_NEAR(result.cooldown_seconds, 1.2, 1e-9);  // 0.5 + 0.5 + 0.2, then nothing
  EXPECT_NEAR(timer.waited, 1.2, 1e-9);
  EXPECT_NEAR(run_left, 98.8, 1e-9);
  EXPECT_TRUE(budget.exhausted);
  ASSERT_EQ(result.warnings.size(), 1u);
  EXPECT_EQ(result.warnings[0],
            "burst cool-down allowance of the case (measure.burst_cooldown_case_max_s) ran out after 3 samples; "
            "later samples were taken without cooling down");
}

TEST(CooldownBudget, TheRunsAllowanceIsSharedByItsCases) {
  NeverCoolingTimer timer;
  double run_left = 0.7;
  CooldownBudget first{20, &run_left};
  CaseResult first_result;
  (void)sample_until_stop(timer, [] {}, SampleMode::eager, burst_settings(4, &first), first_result);
  EXPECT_NEAR(first_result.cooldown_seconds, 0.7, 1e-9);
  EXPECT_TRUE(first.exhausted);
  EXPECT_NE(first_result.warnings.at(0).find("allowance of the run (measure.burst_cooldown_run_max_s)"),
            std::string::npos);
  CooldownBudget second{20, &run_left};
  CaseResult second_result;
  (void)sample_until_stop(timer, [] {}, SampleMode::eager, burst_settings(4, &second), second_result);
  EXPECT_EQ(second_result.cooldown_seconds, 0);  // nothing left for the run's later cases
  EXPECT_TRUE(second.exhausted);
  EXPECT_NEAR(timer.waited, 0.7, 1e-9);
}

TEST(CooldownBudget, WithinTheAllowancesNothingChanges) {
  NeverCoolingTimer timer;
  double run_left = 100;
  CooldownBudget budget{20, &run_left};
  CaseResult result;
  (void)sample_until_stop(timer, [] {}, SampleMode::eager, burst_settings(5, &budget), result);
  EXPECT_NEAR(result.cooldown_seconds, 2.5, 1e-9);
  EXPECT_FALSE(budget.exhausted);
  EXPECT_TRUE(result.warnings.empty());
}

}  // namespace
}  // namespace attnsweep
