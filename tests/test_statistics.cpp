// Statistics and the stopping rule.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "runner/measure/statistics.hpp"
#include "runner/measure/stdrel_criterion.hpp"
#include "runner/measure/stopping_rule.hpp"

namespace attnsweep {
namespace {

TEST(Statistics, MatchesNumpyConventions) {
  const SampleStatistics s = summarize({10, 1, 9, 2, 8, 3, 7, 4, 6, 5});
  EXPECT_EQ(s.count, 10);
  EXPECT_DOUBLE_EQ(s.median, 5.5);
  EXPECT_DOUBLE_EQ(s.p10, 1.9);   // numpy.percentile(range(1, 11), 10)
  EXPECT_DOUBLE_EQ(s.p90, 9.1);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 10);
  EXPECT_DOUBLE_EQ(s.mean, 5.5);
  EXPECT_NEAR(s.stdev, 3.0276503540974917, 1e-12);  // sample stdev (n - 1)
  EXPECT_NEAR(s.rel_stdev(), 3.0276503540974917 / 5.5, 1e-12);
}

TEST(Statistics, MedianConfidenceIntervalRanksAreTheExactBinomialOnes) {
  // Largest k with 2 P(Binomial(n, 1/2) <= k - 1) <= 5%, from Python's math.comb:
  // coverage 96.9% (n = 6), 97.9% (10), 95.9% (20), 96.5% (100), 95.1% (5000).
  EXPECT_EQ(median_interval_low_rank(5), 0u);
  EXPECT_EQ(median_interval_low_rank(6), 1u);
  EXPECT_EQ(median_interval_low_rank(8), 1u);
  EXPECT_EQ(median_interval_low_rank(10), 2u);
  EXPECT_EQ(median_interval_low_rank(20), 6u);
  EXPECT_EQ(median_interval_low_rank(100), 40u);
  EXPECT_EQ(median_interval_low_rank(1000), 469u);
  EXPECT_EQ(median_interval_low_rank(5000), 2431u);  // past where 0.5^n underflows a double
}

TEST(Statistics, MedianConfidenceIntervalUsesOrderStatistics) {
  // n = 100: ranks 40 and 61, median 50.5.
  std::vector<double> values;
  for (int i = 100; i >= 1; --i) values.push_back(i);
  EXPECT_NEAR(summarize(values).median_ci_rel.value(), (61.0 - 40.0) / 2 / 50.5, 1e-12);
  // n = 10: ranks 2 and 9. One slow first sample (seen on the H200: 5386 us, then
  // nine within 5261..5270) no longer widens the interval to the whole range.
  EXPECT_NEAR(summarize({10, 1, 9, 2, 8, 3, 7, 4, 6, 5}).median_ci_rel.value(), (9.0 - 2.0) / 2 / 5.5, 1e-12);
  const SampleStatistics slow_first =
      summarize({5385.6, 5267.8, 5270.1, 5269.2, 5268.9, 5262.0, 5263.3, 5261.1, 5263.2, 5262.0});
  EXPECT_NEAR(slow_first.median_ci_rel.value(), (5270.1 - 5262.0) / 2 / slow_first.median, 1e-12);
  // Identical samples: no uncertainty; under 6 samples: not computed.
  EXPECT_DOUBLE_EQ(summarize({7, 7, 7, 7, 7, 7, 7}).median_ci_rel.value(), 0);
  EXPECT_FALSE(summarize({1, 2, 3, 4, 5}).median_ci_rel.has_value());
}

TEST(Statistics, EmptyAndSingleSample) {
  EXPECT_EQ(summarize({}).count, 0);
  const SampleStatistics one = summarize({42});
  EXPECT_DOUBLE_EQ(one.median, 42);
  EXPECT_DOUBLE_EQ(one.p10, 42);
  EXPECT_DOUBLE_EQ(one.stdev, 0);
}

// No floor of GPU time: these rules stop on their sample counts, noise and seconds alone.
StoppingSettings settings(int min_samples, int max_samples, double target, double seconds) {
  return {min_samples, max_samples, target, seconds, /*min_gpu_seconds=*/0};
}

// The stored spelling of the rule's reason; "" while it runs.
std::string reason_of(const StoppingRule& rule) { return rule.reason() ? to_string(*rule.reason()) : ""; }

TEST(StoppingRule, StopsAtTargetNoiseOnlyAfterMinimumSamples) {
  StoppingRule rule(settings(5, 100, 0.01, 60));
  for (int i = 0; i < 4; ++i) {
    rule.add_sample(100);
    EXPECT_FALSE(rule.should_stop(0.1)) << i;
  }
  rule.add_sample(100);
  EXPECT_TRUE(rule.should_stop(0.1));
  EXPECT_EQ(reason_of(rule), "target_rel_stdev");
  EXPECT_EQ(rule.count(), 5);
}

// Feeds `rule` alternating samples (even, odd, even, ...) until it stops; returns how many.
int take_alternating(StoppingRule& rule, double even, double odd) {
  int taken = 0;
  do {
    rule.add_sample(taken % 2 ? odd : even);
    ++taken;
  } while (!rule.should_stop(0.1));
  return taken;
}

TEST(StoppingRule, NoisySamplesRunToTheSampleCap) {
  StoppingRule rule(settings(2, 10, 0.01, 60));
  EXPECT_EQ(take_alternating(rule, 200, 100), 10);
  EXPECT_EQ(reason_of(rule), "max_samples");
  EXPECT_NEAR(rule.rel_stdev(), summarize({200, 100, 200, 100, 200, 100, 200, 100, 200, 100}).rel_stdev(), 1e-12);
}

TEST(StoppingRule, TimeCapWinsOverMinimumSamples) {
  StoppingRule rule(settings(50, 100, 0.01, 1.0));
  rule.add_sample(1e6);
  EXPECT_FALSE(rule.should_stop(0.5));
  rule.add_sample(1e6);
  EXPECT_TRUE(rule.should_stop(1.0));
  EXPECT_EQ(reason_of(rule), "max_case_seconds");
}

TEST(StoppingRule, WaitsForTheMinimumSummedTime) {
  StoppingSettings s = settings(2, 1000, 0.5, 60);
  s.min_gpu_seconds = 0.001;  // 1000 us
  StoppingRule rule(s);
  for (int i = 0; i < 9; ++i) {
    rule.add_sample(100);
    EXPECT_FALSE(rule.should_stop(0.1)) << i;  // 900 us so far
  }
  rule.add_sample(100);
  EXPECT_TRUE(rule.should_stop(0.1));
  EXPECT_EQ(reason_of(rule), "target_rel_stdev");
}

TEST(StoppingRule, StopsWhenTheNoiseEstimateNoLongerMoves) {
  // Alternating 90/110: the relative stdev settles near 0.1, far over the
  // 0.001 target, so more samples cannot help.
  StoppingRule rule(settings(10, 100000, 0.001, 60));
  const int taken = take_alternating(rule, 110, 90);
  EXPECT_EQ(reason_of(rule), "noise_converged");
  EXPECT_LT(taken, 200);
  EXPECT_NEAR(rule.rel_stdev(), 0.1, 0.01);
}

TEST(StoppingRule, TheCriterionIsStdrelByNameWithItsNamedParameters) {
  StoppingRule rule(settings(5, 100, 0.01, 60));
  EXPECT_EQ(rule.criterion().name(), "stdrel");
  EXPECT_EQ(stopping_criterion_names(), (std::vector<std::string>{"stdrel", "median_ci"}));  // the graph replays' is the second
  std::vector<std::string> names;
  for (const NamedParameter& parameter : rule.criterion().parameters()) names.push_back(parameter.name);
  EXPECT_EQ(names, (std::vector<std::string>{"target_rel_stdev", "noise_window", "noise_looks", "noise_spread"}));
  EXPECT_DOUBLE_EQ(rule.criterion().parameters().front().value, 0.01);
  StoppingSettings unknown = settings(5, 100, 0.01, 60);
  unknown.criterion = "entropy";
  EXPECT_THROW(StoppingRule{unknown}, std::invalid_argument);
}

// The criterion alone: it converges on what it sees; the caps and minimums are the rule's.
TEST(StoppingRule, TheStdrelCriterionStopsAtTheTargetWithoutMinimums) {
  StdrelCriterion criterion(settings(50, 100, 0.01, 60));
  criterion.add_sample(100);
  EXPECT_FALSE(criterion.is_finished());  // one sample: no spread yet
  criterion.add_sample(100);
  EXPECT_TRUE(criterion.is_finished());
  EXPECT_EQ(criterion.reason(), StopReason::target_rel_stdev);
}

}  // namespace
}  // namespace attnsweep
