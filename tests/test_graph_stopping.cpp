// The CUDA-graph replays' stopping rule (issue 35): the median's interval, not
// the eager rule's least summed time, ends them; the setting is read and checked.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "runner/config/config.hpp"
#include "runner/measure/median_interval_criterion.hpp"
#include "runner/measure/statistics.hpp"
#include "runner/measure/stopping_rule.hpp"

namespace attnsweep {
namespace {

// Samples of `median_us` spread uniformly by +-`spread` (a share), seeded.
std::vector<double> spread_samples(int count, double median_us, double spread, unsigned seed = 7) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<double> share(-spread, spread);
  std::vector<double> samples;
  for (int i = 0; i < count; ++i) samples.push_back(median_us * (1 + share(generator)));
  return samples;
}

// Feeds samples until the rule stops (elapsed time 0: no time cap); returns how many it took.
int samples_until_stop(StoppingRule& rule, const std::vector<double>& samples) {
  int taken = 0;
  for (double value : samples) {
    rule.add_sample(value);
    ++taken;
    if (rule.should_stop(0)) break;
  }
  return taken;
}

MeasureSettings defaults() { return MeasureSettings{}; }

TEST(GraphStopping, TheReplaysRuleHasNoLeastSummedTimeAndNamesItsCriterion) {
  MeasureSettings measure = defaults();
  measure.graph_target_median_ci = 0.01;
  const StoppingSettings eager = StoppingSettings::from(measure);
  const StoppingSettings graph = StoppingSettings::for_graph_replays(measure);
  EXPECT_EQ(eager.criterion, "stdrel");
  EXPECT_DOUBLE_EQ(eager.min_gpu_seconds, 0.05);
  EXPECT_EQ(graph.criterion, "median_ci");
  EXPECT_DOUBLE_EQ(graph.min_gpu_seconds, 0);
  EXPECT_DOUBLE_EQ(graph.target_median_ci_rel, 0.01);
  // The caps and the least count are the eager rule's.
  EXPECT_EQ(graph.min_samples, eager.min_samples);
  EXPECT_EQ(graph.max_samples, eager.max_samples);
  EXPECT_DOUBLE_EQ(graph.max_case_seconds, eager.max_case_seconds);
  StoppingRule rule(graph);
  EXPECT_EQ(rule.criterion().name(), "median_ci");
  ASSERT_EQ(rule.criterion().parameters().size(), 1u);
  EXPECT_EQ(rule.criterion().parameters()[0].name, "target_median_ci_rel");
  EXPECT_DOUBLE_EQ(rule.criterion().parameters()[0].value, 0.01);
  EXPECT_EQ(stopping_criterion_names(), (std::vector<std::string>{"stdrel", "median_ci"}));
}

// What the change buys: 30 us replays spread by +-0.2%. The eager rule waits for
// 0.05 s of summed time (1,667 samples); the replays' rule stops at min_samples.
TEST(GraphStopping, ShortQuietReplaysStopAtTheLeastCountNotAtTheLeastSummedTime) {
  const std::vector<double> replays = spread_samples(5000, 30.0, 0.002);
  StoppingRule eager(StoppingSettings::from(defaults()));
  StoppingRule graph(StoppingSettings::for_graph_replays(defaults()));
  EXPECT_NEAR(samples_until_stop(eager, replays), 1667, 5);
  EXPECT_EQ(samples_until_stop(graph, replays), 10);
  ASSERT_TRUE(graph.reason());
  EXPECT_EQ(*graph.reason(), StopReason::median_ci);
  EXPECT_STREQ(to_string(*graph.reason()), "median_ci");
}

// Replays spread by +-5%: ten do not pin the median to 0.5%, more do; the rule
// stops as soon as the interval it stores is within the target.
TEST(GraphStopping, NoisierReplaysRunUntilTheirMedianIsKnownToTheTarget) {
  const std::vector<double> replays = spread_samples(2000, 100.0, 0.05);
  StoppingRule graph(StoppingSettings::for_graph_replays(defaults()));
  const int taken = samples_until_stop(graph, replays);
  EXPECT_GT(taken, 10);
  EXPECT_LT(taken, 2000);
  ASSERT_TRUE(graph.reason());
  EXPECT_EQ(*graph.reason(), StopReason::median_ci);
  const SampleStatistics kept = summarize({replays.begin(), replays.begin() + taken});
  ASSERT_TRUE(kept.median_ci_rel);
  EXPECT_LE(*kept.median_ci_rel, 0.005);
  // One look earlier it was not yet there (looks are every sample up to 64, then every 8).
  const int earlier = taken <= MedianIntervalCriterion::kLookEveryFrom ? taken - 1
                                                                        : taken - MedianIntervalCriterion::kLookEvery;
  const SampleStatistics before = summarize({replays.begin(), replays.begin() + earlier});
  ASSERT_TRUE(before.median_ci_rel);
  EXPECT_GT(*before.median_ci_rel, 0.005);
}

// Replays that never settle (two levels 20% apart, alternating) end at the sample cap.
TEST(GraphStopping, ReplaysThatNeverSettleEndAtTheSampleCap) {
  MeasureSettings measure = defaults();
  measure.max_samples = 300;
  StoppingRule graph(StoppingSettings::for_graph_replays(measure));
  std::vector<double> replays;
  for (int i = 0; i < 1000; ++i) replays.push_back(i % 2 ? 120.0 : 100.0);
  EXPECT_EQ(samples_until_stop(graph, replays), 300);
  ASSERT_TRUE(graph.reason());
  EXPECT_EQ(*graph.reason(), StopReason::max_samples);
}

TEST(GraphStopping, TheIntervalOfSortedSamplesIsTheStoredOne) {
  std::vector<double> samples = spread_samples(37, 50.0, 0.03);
  const SampleStatistics stats = summarize(samples);
  std::sort(samples.begin(), samples.end());
  ASSERT_TRUE(stats.median_ci_rel);
  EXPECT_DOUBLE_EQ(*median_ci_rel_sorted(samples), *stats.median_ci_rel);
  EXPECT_FALSE(median_ci_rel_sorted({1, 2, 3, 4, 5}));  // under 6 samples: no interval
}

const char* const kSweep = R"(
variants: [naive]
dtypes: [bf16]
shapes: {batch: 1, heads: 2, seq_len: 64, head_dim: 32}
)";

TEST(GraphStopping, TheTargetIsAMeasureKeyAboveZero) {
  EXPECT_DOUBLE_EQ(parse_config(kSweep, "sweep.yaml").measure.graph_target_median_ci, 0.005);
  const Config set = parse_config(std::string(kSweep) + "measure: {graph_target_median_ci: 0.002}\n", "sweep.yaml");
  EXPECT_DOUBLE_EQ(set.measure.graph_target_median_ci, 0.002);
  for (const char* bad : {"0", "-0.1", "tight"}) {
    try {
      parse_config(std::string(kSweep) + "measure: {graph_target_median_ci: " + bad + "}\n", "sweep.yaml");
      FAIL() << "accepted " << bad;
    } catch (const ConfigError& error) {
      const std::string message = error.what();
      EXPECT_NE(message.find("sweep.yaml:5"), std::string::npos) << message;
      EXPECT_NE(message.find("measure.graph_target_median_ci"), std::string::npos) << message;
    }
  }
}

}  // namespace
}  // namespace attnsweep
