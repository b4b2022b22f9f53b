#include "runner/plan/shard.hpp"

#include <algorithm>
#include <numeric>
#include <regex>
#include <tuple>

#include "runner/common/errors.hpp"
#include "runner/plan/case_axes.hpp"
#include "runner/plan/cost.hpp"

namespace attnsweep {
namespace {

WorkUnit single(const Case& c, const MeasureSettings& measure) {
  return {{c.plan_index}, expected_case_ns(c, measure) + expected_reference_ns(c.shape)};
}

// The plan's groups in plan order: variants vary fastest (plan.cpp), so the
// cases that share inputs (case_axes.hpp) are neighbours.
std::vector<std::vector<const Case*>> groups_of(const Plan& plan) {
  std::vector<std::vector<const Case*>> groups;
  for (const Case& c : plan.cases) {
    if (groups.empty() || !same_inputs(*groups.back().front(), c)) groups.emplace_back();
    groups.back().push_back(&c);
  }
  return groups;
}

std::int64_t group_cost(const std::vector<const Case*>& group, const MeasureSettings& measure) {
  std::int64_t cost = expected_reference_ns(group.front()->shape);
  for (const Case* c : group) cost += expected_case_ns(*c, measure);
  return cost;
}

// A split is accepted when its busiest shard is expected to take at most this
// many percent of an even share; otherwise groups are split finer and finer.
constexpr std::int64_t kAcceptedImbalancePercent = 115;
constexpr int kFinestGranularity = 8;

bool longer_first(const WorkUnit& a, const WorkUnit& b) {
  return std::make_tuple(-a.cost_ns, a.plan_indexes.front()) < std::make_tuple(-b.cost_ns, b.plan_indexes.front());
}

}  // namespace

ShardSpec parse_shard(const std::string& text, const std::string& option) {
  std::smatch match;
  const auto refuse = [&](const std::string& why) {
    throw BadInputError(option + ": " + why + "; expected K/N with 0 <= K < N <= " + std::to_string(kMaxShards) +
                        ", e.g. 0/4 for the first of four shards");
  };
  if (!std::regex_match(text, match, std::regex("([0-9]{1,6})/([0-9]{1,6})"))) refuse("invalid value '" + text + "'");
  const ShardSpec spec{std::stoi(match[1]), std::stoi(match[2])};
  if (spec.count < 1 || spec.count > kMaxShards) refuse("N = " + std::to_string(spec.count) + " is out of range");
  if (spec.index >= spec.count) {
    refuse("K = " + std::to_string(spec.index) + " is not below N = " + std::to_string(spec.count) +
           " (K counts from 0)");
  }
  return spec;
}

std::vector<WorkUnit> work_units(const Plan& plan, const MeasureSettings& measure, int parallel, int granularity) {
  const auto groups = groups_of(plan);
  std::vector<std::int64_t> costs;
  for (const auto& group : groups) costs.push_back(group_cost(group, measure));
  const std::int64_t total = std::accumulate(costs.begin(), costs.end(), std::int64_t{0});
  const std::int64_t limit = total / std::max<std::int64_t>(1, std::int64_t{parallel} * std::max(1, granularity));
  std::vector<bool> split(groups.size(), false);
  std::size_t units = 0;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    split[g] = groups[g].size() > 1 && costs[g] > limit;
    units += split[g] ? groups[g].size() : 1;
  }
  // Too few units for the workers: split the costliest groups still whole.
  while (units < static_cast<std::size_t>(std::max(parallel, 1))) {
    std::size_t best = groups.size();
    for (std::size_t g = 0; g < groups.size(); ++g) {
      if (!split[g] && groups[g].size() > 1 && (best == groups.size() || costs[g] > costs[best])) best = g;
    }
    if (best == groups.size()) break;
    split[best] = true;
    units += groups[best].size() - 1;
  }
  std::vector<WorkUnit> result;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    if (split[g]) {
      for (const Case* c : groups[g]) result.push_back(single(*c, measure));
    } else {
      WorkUnit unit{{}, costs[g]};
      for (const Case* c : groups[g]) unit.plan_indexes.push_back(c->plan_index);
      result.push_back(std::move(unit));
    }
  }
  std::sort(result.begin(), result.end(), longer_first);
  return result;
}

std::vector<std::vector<int>> split_into_shards(const Plan& plan, const MeasureSettings& measure, int count) {
  // Whole groups first: the variants of one shape then run on one machine, so
  // their comparison is like with like, and share inputs and reference. Finer
  // only when whole groups cannot be balanced.
  std::vector<std::vector<int>> shards;
  for (int granularity = 1; granularity <= kFinestGranularity; granularity *= 2) {
    shards.assign(static_cast<std::size_t>(std::max(count, 1)), {});
    std::vector<std::int64_t> load(shards.size(), 0);
    for (const WorkUnit& unit : work_units(plan, measure, count, granularity)) {
      const std::size_t lightest =
          static_cast<std::size_t>(std::min_element(load.begin(), load.end()) - load.begin());  // first on a tie
      load[lightest] += unit.cost_ns;
      shards[lightest].insert(shards[lightest].end(), unit.plan_indexes.begin(), unit.plan_indexes.end());
    }
    const std::int64_t total = std::accumulate(load.begin(), load.end(), std::int64_t{0});
    const std::int64_t busiest = *std::max_element(load.begin(), load.end());
    if (busiest / kAcceptedImbalancePercent <= total / static_cast<std::int64_t>(load.size()) / 100) break;
  }
  for (auto& shard : shards) std::sort(shard.begin(), shard.end());
  return shards;
}

std::int64_t expected_plan_ns(const Plan& plan, const MeasureSettings& measure) {
  std::int64_t total = 0;
  for (const WorkUnit& unit : work_units(plan, measure, 1)) total += unit.cost_ns;
  // The float64 checks by their score matrices (cost.hpp), on top of the split's
  // work-based term: the estimate counts what a head_dim of 1 costs, the split
  // (cost_lpt_v1) stays what it was.
  return total + expected_reference_checks(plan, measure, /*cuda=*/true).ns;
}

ReferenceChecks expected_reference_checks(const Plan& plan, const MeasureSettings& measure, bool cuda) {
  ReferenceChecks checks;
  if (!measure.accuracy_check) return checks;
  for (const auto& group : groups_of(plan)) {  // one check per group, its costliest pass's
    Pass costliest = Pass::forward;
    for (const Case* c : group) {
      if (pass_cost_tenths(c->pass) > pass_cost_tenths(costliest)) costliest = c->pass;
    }
    const std::int64_t expected = expected_reference_check_ns(group.front()->shape, costliest, cuda);
    const std::int64_t limit = reference_limit_ns(measure);
    if (expected > limit) ++checks.over_limit;
    checks.ns += std::min(expected, limit);
  }
  return checks;
}

Plan shard_plan(const Plan& plan, const MeasureSettings& measure, const ShardSpec& shard, const std::string& config_path) {
  // Refused for every K alike: some shards of such a split would have nothing to run.
  if (static_cast<std::size_t>(shard.count) > plan.cases.size()) {
    throw BadInputError(config_path + ": " + std::to_string(shard.count) + " shards for a plan of " +
                        std::to_string(plan.cases.size()) + " cases; use at most " +
                        std::to_string(plan.cases.size()) + " shards");
  }
  const auto shards = split_into_shards(plan, measure, shard.count);
  const auto& mine = shards[static_cast<std::size_t>(shard.index)];
  Plan part;
  part.excluded = plan.excluded;
  part.duplicates = plan.duplicates;
  for (int index : mine) part.cases.push_back(plan.cases[static_cast<std::size_t>(index)]);
  return part;
}

}  // namespace attnsweep
