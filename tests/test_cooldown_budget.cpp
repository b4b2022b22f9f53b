// The burst regime's cool-down allowances (issue 21, item 4): a GPU that never
// cools (another process keeps it capped) made every sample wait its full
// cool-down, a 7 s night took 243 s. With a timer whose clock never comes back,
// the case's and the run's allowances bound the waiting, and the case says when
// they ran out. (The real Timer::cool_down needs NVML; this one stands in for it.)
#include <gtest/gtest.h>

#include <string>
#include <vector>

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

// A run in the burst regime (cool-downs of up to 0.5 s) on the never-cooling GPU,
// with run_left_ seconds of the run's cool-down allowance left (100 unless a test says).
class BurstCooldownBudget : public ::testing::Test {
 protected:
  // What one case of the run gave: the samples it kept, its result, and whether
  // its budget (the case's allowance or the run's) ran out.
  struct BurstCase {
    std::vector<double> kept;
    CaseResult result;
    bool budget_exhausted = false;
  };

  // One case of `samples` eager samples under a case allowance of `case_allowance_s`.
  BurstCase sample_case(int samples, double case_allowance_s) {
    CooldownBudget budget{case_allowance_s, &run_left_};
    SamplingSettings settings;
    settings.stopping.min_samples = samples;
    settings.stopping.max_samples = samples;
    settings.stopping.max_case_seconds = 60;
    settings.stopping.min_gpu_seconds = 0;
    settings.regime = MeasureRegime::burst;
    settings.burst_cooldown_max_s = 0.5;
    settings.cooldown_budget = &budget;
    BurstCase burst;
    burst.kept = sample_until_stop(timer_, [] {}, SampleMode::eager, settings, burst.result);
    burst.budget_exhausted = budget.exhausted;
    return burst;
  }

  NeverCoolingTimer timer_;
  double run_left_ = 100;
};

TEST_F(BurstCooldownBudget, TheCasesAllowanceBoundsItsCoolDownAndTheCaseSaysWhenItRanOut) {
  const BurstCase burst = sample_case(10, 1.2);
  EXPECT_EQ(burst.kept.size(), 10u);
  EXPECT_NEAR(burst.result.cooldown_seconds, 1.2, 1e-9);  // 0.5 + 0.5 + 0.2, then nothing
  EXPECT_NEAR(timer_.waited, 1.2, 1e-9);
  EXPECT_NEAR(run_left_, 98.8, 1e-9);
  EXPECT_TRUE(burst.budget_exhausted);
  ASSERT_EQ(burst.result.warnings.size(), 1u);
  EXPECT_EQ(burst.result.warnings[0],
            "burst cool-down allowance of the case (measure.burst_cooldown_case_max_s) ran out after 3 samples; "
            "later samples were taken without cooling down");
}

TEST_F(BurstCooldownBudget, TheRunsAllowanceIsSharedByItsCases) {
  run_left_ = 0.7;
  const BurstCase first = sample_case(4, 20);
  EXPECT_NEAR(first.result.cooldown_seconds, 0.7, 1e-9);
  EXPECT_TRUE(first.budget_exhausted);
  EXPECT_NE(first.result.warnings.at(0).find("allowance of the run (measure.burst_cooldown_run_max_s)"),
            std::string::npos);
  const BurstCase second = sample_case(4, 20);
  EXPECT_EQ(second.result.cooldown_seconds, 0);  // nothing left for the run's later cases
  EXPECT_TRUE(second.budget_exhausted);
  EXPECT_NEAR(timer_.waited, 0.7, 1e-9);
}

TEST_F(BurstCooldownBudget, WithinTheAllowancesNothingChanges) {
  const BurstCase burst = sample_case(5, 20);
  EXPECT_NEAR(burst.result.cooldown_seconds, 2.5, 1e-9);
  EXPECT_FALSE(burst.budget_exhausted);
  EXPECT_TRUE(burst.result.warnings.empty());
}

}  // namespace
}  // namespace attnsweep
