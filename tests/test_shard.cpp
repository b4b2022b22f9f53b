// The shard split and the cost model: every case in exactly one shard, the
// same split every time, balanced by expected time, groups kept whole where
// that balances; and the cost model's ordering.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

#include "runner/common/errors.hpp"
#include "runner/config/config.hpp"
#include "runner/plan/cost.hpp"
#include "runner/plan/plan.hpp"
#include "runner/plan/shard.hpp"

namespace attnsweep {
namespace {

const char* const kSweep = R"(
variants: [naive, sdpa_math, sdpa_flash, sdpa_cudnn]
dtypes: [bf16, fp32]
shapes: {batch: [1, 4], heads: 16, seq_len: [256, 1024, 4096], head_dim: [64, 128]}
)";

struct Sweep {
  Config config;
  Plan plan;
};
Sweep sweep(const std::string& yaml = kSweep) {
  Config config = parse_config(yaml, "shard.yaml");
  Plan plan = make_plan(config);
  return {std::move(config), std::move(plan)};
}

std::int64_t cost_of(const Sweep& s, const std::vector<int>& indexes) {
  // As the split counts it: each case, and one reference per group present.
  std::int64_t total = 0;
  std::set<std::string> groups;
  for (int i : indexes) {
    const Case& c = s.plan.cases[static_cast<std::size_t>(i)];
    total += expected_case_ns(c, s.config.measure);
    if (groups.insert(c.shape.label() + to_string(c.dtype) + c.mask.label()).second) {
      total += expected_reference_ns(c.shape);
    }
  }
  return total;
}

TEST(Shard, ParsesKOfNAndRefusesWhatIsNotOne) {
  EXPECT_EQ(parse_shard("0/4"), (ShardSpec{0, 4}));
  EXPECT_EQ(parse_shard("3/4"), (ShardSpec{3, 4}));
  EXPECT_EQ(parse_shard("2/3").label(), "2/3");
  for (const std::string bad : {"4/4", "1/0", "-1/3", "1", "a/b", "1/3/5", " 1/3", "1/10001", ""}) {
    try {
      parse_shard(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const BadInputError& error) {
      EXPECT_NE(std::string(error.what()).find("expected K/N with 0 <= K < N"), std::string::npos) << error.what();
    }
  }
}

TEST(Shard, EveryCaseIsInExactlyOneShardForEveryCount) {
  const Sweep s = sweep();
  ASSERT_EQ(s.plan.cases.size(), 4u * 2 * 2 * 3 * 2);
  for (int count : {1, 2, 3, 5, 8, 17, 96}) {
    const auto shards = split_into_shards(s.plan, s.config.measure, count);
    ASSERT_EQ(shards.size(), static_cast<std::size_t>(count));
    std::multiset<int> all;
    for (const auto& shard : shards) {
      EXPECT_FALSE(shard.empty()) << count;
      EXPECT_TRUE(std::is_sorted(shard.begin(), shard.end()));
      all.insert(shard.begin(), shard.end());
    }
    ASSERT_EQ(all.size(), s.plan.cases.size()) << count;
    for (int i = 0; i < static_cast<int>(s.plan.cases.size()); ++i) EXPECT_EQ(all.count(i), 1u) << i;
  }
}

TEST(Shard, TheSplitIsTheSameEveryTime) {
  const Sweep a = sweep(), b = sweep();
  EXPECT_EQ(split_into_shards(a.plan, a.config.measure, 5), split_into_shards(b.plan, b.config.measure, 5));
  // Pinned: the split is a contract between the jobs of one sweep, built by
  // whatever attnsweep each job has. Changing it means a new kShardSplitVersion.
  const auto shards = split_into_shards(a.plan, a.config.measure, 3);
  EXPECT_EQ(std::string(kShardSplitVersion), "cost_lpt_v1");
  std::vector<std::size_t> sizes;
  for (const auto& shard : shards) sizes.push_back(shard.size());
  EXPECT_EQ(sizes, (std::vector<std::size_t>{12, 40, 44}));
  EXPECT_EQ(shards[0].front(), 28);
  EXPECT_EQ(shards[2].back(), 91);
}

TEST(Shard, ShardsAreBalancedByExpectedTimeNotByCount) {
  const Sweep s = sweep();
  for (int count : {2, 3, 4, 6}) {
    const auto shards = split_into_shards(s.plan, s.config.measure, count);
    std::vector<std::int64_t> costs;
    for (const auto& shard : shards) costs.push_back(cost_of(s, shard));
    const std::int64_t total = std::accumulate(costs.begin(), costs.end(), std::int64_t{0});
    const std::int64_t busiest = *std::max_element(costs.begin(), costs.end());
    EXPECT_LE(static_cast<double>(busiest), 1.15 * static_cast<double>(total) / count) << count << " shards";
  }
  // One costly shape among cheap ones: the shard holding it holds fewer cases.
  const Sweep skewed = sweep(R"(
variants: [sdpa_math]
dtypes: [bf16]
shapes: [{batch: 8, heads: 32, seq_len: 16384, head_dim: 128}, {batch: 1, heads: 1, seq_len: [16, 32, 48, 64, 80, 96], head_dim: 8}]
)");
  const auto two = split_into_shards(skewed.plan, skewed.config.measure, 2);
  const auto& big = two[0].front() == 0 ? two[0] : two[1];
  const auto& small = two[0].front() == 0 ? two[1] : two[0];
  EXPECT_EQ(big, std::vector<int>{0});
  EXPECT_EQ(small.size(), 6u);
}

TEST(Shard, VariantsOfOneShapeStayTogetherWhenWholeGroupsBalance) {
  const Sweep s = sweep();
  const auto shards = split_into_shards(s.plan, s.config.measure, 3);
  std::map<std::string, std::set<std::size_t>> shards_of_group;
  for (std::size_t k = 0; k < shards.size(); ++k) {
    for (int i : shards[k]) {
      const Case& c = s.plan.cases[static_cast<std::size_t>(i)];
      shards_of_group[c.shape.label() + to_string(c.dtype)].insert(k);
    }
  }
  ASSERT_EQ(shards_of_group.size(), 24u);
  for (const auto& [group, in] : shards_of_group) EXPECT_EQ(in.size(), 1u) << group << " is split";
}

TEST(Shard, APartKeepsPlanIndexesAndMoreShardsThanCasesAreRefused) {
  const Sweep s = sweep();
  const Plan part = shard_plan(s.plan, s.config.measure, {1, 3}, "shard.yaml");
  const auto expected = split_into_shards(s.plan, s.config.measure, 3)[1];
  ASSERT_EQ(part.cases.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(part.cases[i].plan_index, expected[i]);
    EXPECT_EQ(part.cases[i].label(), s.plan.cases[static_cast<std::size_t>(expected[i])].label());
  }
  try {
    shard_plan(s.plan, s.config.measure, {0, 97}, "shard.yaml");
    FAIL() << "97 shards of 96 cases were accepted";
  } catch (const BadInputError& error) {
    EXPECT_STREQ(error.what(), "shard.yaml: 97 shards for a plan of 96 cases; use at most 96 shards");
  }
}

TEST(Shard, TheGpuQueueHandsOutTheLongestUnitsFirstAndSplitsFiner) {
  const Sweep s = sweep();
  const auto units = work_units(s.plan, s.config.measure, 2, 4);  // as --gpus 0,1 asks for them
  ASSERT_FALSE(units.empty());
  for (std::size_t i = 1; i < units.size(); ++i) EXPECT_GE(units[i - 1].cost_ns, units[i].cost_ns) << i;
  std::multiset<int> all;
  for (const auto& unit : units) all.insert(unit.plan_indexes.begin(), unit.plan_indexes.end());
  EXPECT_EQ(all.size(), s.plan.cases.size());
  // The costliest case of the sweep (math, fp32, 4x16x4096x128) is in the first unit, alone:
  // its group costs more than 1/(2 x 4) of the sweep, so the group is split.
  const Case& first = s.plan.cases[static_cast<std::size_t>(units.front().plan_indexes.front())];
  EXPECT_EQ(units.front().plan_indexes.size(), 1u);
  EXPECT_EQ(first.label(), "sdpa_math 4x16x4096x128 fp32 causal");
  // With one worker nothing needs splitting: whole groups of 4 variants.
  for (const auto& unit : work_units(s.plan, s.config.measure, 1, 1)) EXPECT_EQ(unit.plan_indexes.size(), 4u);
}

TEST(Cost, FollowsWorkDtypeAndVariant) {
  const Shape big{8, 16, 16, 4096, 4096, 128}, small{8, 16, 16, 1024, 1024, 64};
  const auto forward = [](const char* variant, const Shape& shape, Dtype dtype) {
    return expected_forward_ns(Case{0, variant, shape, dtype, true});
  };
  // The study's shape: sdpa_flash about 96 us on the H200, naive about 11x, math about 27x.
  EXPECT_NEAR(static_cast<double>(forward("sdpa_flash", small, Dtype::bf16)), 95443, 1000);
  EXPECT_NEAR(static_cast<double>(forward("naive", small, Dtype::bf16)) / forward("sdpa_flash", small, Dtype::bf16), 11, 0.1);
  EXPECT_GT(forward("sdpa_math", small, Dtype::bf16), forward("naive", small, Dtype::bf16));
  EXPECT_NEAR(static_cast<double>(forward("sdpa_flash", small, Dtype::fp32)), 8.0 * forward("sdpa_flash", small, Dtype::bf16), 10);
  EXPECT_GT(forward("sdpa_flash", big, Dtype::bf16), 30 * forward("sdpa_flash", small, Dtype::bf16));
  // A tiny shape costs the launch floor, and an absurd one saturates instead of overflowing.
  EXPECT_EQ(forward("sdpa_flash", Shape{1, 1, 1, 1, 1, 1}, Dtype::bf16), 20000);
  const Shape huge{1 << 24, 1 << 24, 1 << 24, 1 << 24, 1 << 24, 1 << 24};
  EXPECT_GT(forward("sdpa_math", huge, Dtype::fp32), 0);
  MeasureSettings measure;
  EXPECT_GT(expected_case_ns(Case{0, "sdpa_math", huge, Dtype::fp32, true}, measure), 0);
  // A case costs at least its fixed overhead, and a long forward its samples.
  EXPECT_GE(expected_case_ns(Case{0, "sdpa_flash", small, Dtype::bf16, true}, measure), 150000000);
  measure.cuda_graph = false;
  const auto without_graph = expected_case_ns(Case{0, "sdpa_flash", small, Dtype::bf16, true}, measure);
  measure.cuda_graph = true;
  EXPECT_GT(expected_case_ns(Case{0, "sdpa_flash", small, Dtype::bf16, true}, measure), without_graph);
}

// Issue 24: the energy window adds its length and the two waits for a step of
// NVML's counter (0.1 s together) to a case's expected time; off, nothing.
TEST(Cost, TheEnergyWindowAddsItsLengthAndTheCountersTwoSteps) {
  const Case c{0, "sdpa_flash", Shape{8, 16, 16, 1024, 1024, 64}, Dtype::bf16, true};
  MeasureSettings off;
  MeasureSettings on = off;
  on.energy_window_ms = 500;
  EXPECT_EQ(expected_case_ns(c, on) - expected_case_ns(c, off), 500000000 + 100000000);
  on.energy_window_ms = 60000;
  EXPECT_EQ(expected_case_ns(c, on) - expected_case_ns(c, off), 60000000000 + 100000000);
}

// Issue 23: each timed sample of a backward runs an untimed forward and the
// backward (2.5 forwards), forward_backward times both: 3.5x the forward's GPU
// time per pass, warm-up and profiled passes alike. A forward costs what it did.
TEST(Cost, ABackwardPassCostsThreeAndAHalfForwards) {
  const Shape study{8, 16, 16, 1024, 1024, 64};
  Case forward{0, "sdpa_flash", study, Dtype::bf16, true};
  Case backward = forward, both = forward;
  backward.pass = Pass::backward;
  both.pass = Pass::forward_backward;
  EXPECT_EQ(pass_cost_tenths(Pass::forward), 10);
  EXPECT_EQ(pass_cost_tenths(Pass::backward), 35);
  EXPECT_EQ(pass_cost_tenths(Pass::forward_backward), 35);
  EXPECT_EQ(expected_pass_ns(forward), expected_forward_ns(forward));
  EXPECT_EQ(expected_forward_ns(backward), expected_forward_ns(forward));  // the forward itself is the same
  EXPECT_EQ(expected_pass_ns(backward), expected_forward_ns(forward) * 35 / 10);
  EXPECT_EQ(expected_pass_ns(both), expected_pass_ns(backward));
  // The launch floor scales too: a tiny backward launches a forward's kernels and its own.
  Case tiny = backward;
  tiny.shape = Shape{1, 1, 1, 1, 1, 1};
  EXPECT_EQ(expected_pass_ns(tiny), 70000);

  // A whole case: the fixed overhead, then warm-up + profiled + 1 passes and the timed samples, each 3.5x.
  MeasureSettings measure;
  measure.warmup = 5;
  measure.profiled_forwards = 5;
  measure.min_samples = 100;
  measure.min_gpu_seconds = 0;
  measure.max_case_seconds = 1000;
  measure.cuda_graph = false;
  const std::int64_t overhead = 150000000, sample_overhead = 60000;
  const auto case_ns = [&](const Case& c) {
    const std::int64_t pass = expected_pass_ns(c);
    return overhead + 100 * (pass + sample_overhead) + 11 * pass;
  };
  EXPECT_EQ(expected_case_ns(forward, measure), case_ns(forward));
  EXPECT_EQ(expected_case_ns(backward, measure), case_ns(backward));
  EXPECT_EQ(expected_case_ns(both, measure), case_ns(both));
  EXPECT_GT(expected_case_ns(backward, measure), expected_case_ns(forward, measure));
  // With the default settings too, and a plan of the three passes costs forward + 2 x backward.
  const MeasureSettings defaults;
  EXPECT_GT(expected_case_ns(backward, defaults), expected_case_ns(forward, defaults));
  Plan plan;
  for (const Pass pass : {Pass::forward, Pass::backward, Pass::forward_backward}) {
    Case c = forward;
    c.plan_index = static_cast<int>(plan.cases.size());
    c.pass = pass;
    plan.cases.push_back(c);
  }
  // The estimate also counts the group's float64 check by its scores, the backward's (issue 55, item 11).
  EXPECT_EQ(expected_plan_ns(plan, defaults), expected_reference_ns(study) + expected_case_ns(forward, defaults) +
                                                  2 * expected_case_ns(backward, defaults) +
                                                  expected_reference_check_ns(study, Pass::backward, true));
}

}  // namespace
}  // namespace attnsweep
