#include "runner/jobs/shard_estimate.hpp"

#include <algorithm>

namespace attnsweep::jobs {

std::vector<ShardEstimate> estimate_shards(const Plan& plan, const MeasureSettings& measure, int count,
                                           std::int64_t build_ns) {
  // One split, then each shard's part as shard_plan() would give it.
  const auto shards = split_into_shards(plan, measure, count);
  std::vector<ShardEstimate> estimates;
  for (int index = 0; index < count; ++index) {
    Plan part;
    for (int plan_index : shards[static_cast<std::size_t>(index)]) {
      part.cases.push_back(plan.cases[static_cast<std::size_t>(plan_index)]);
    }
    ShardEstimate estimate;
    estimate.shard = {index, count};
    estimate.cases = static_cast<int>(part.cases.size());
    estimate.model_ns = part.cases.empty() ? 0 : expected_plan_ns(part, measure);
    estimate.build_ns = build_ns;
    estimate.expected_ns = estimate.model_ns + kJobStartAllowanceNs + build_ns;
    estimates.push_back(estimate);
  }
  return estimates;
}

std::int64_t longest(const std::vector<ShardEstimate>& estimates) {
  std::int64_t most = 0;
  for (const auto& estimate : estimates) most = std::max(most, estimate.expected_ns);
  return most;
}

std::optional<int> shards_that_fit(const Plan& plan, const MeasureSettings& measure, int from, std::int64_t timeout_ns,
                                   std::int64_t build_ns) {
  const int most = std::min(static_cast<int>(plan.cases.size()), kMaxShards);
  if (from >= most || longest(estimate_shards(plan, measure, most, build_ns)) > timeout_ns) return std::nullopt;
  // More shards make the longest shorter (not strictly, the split being greedy): a
  // binary search finds the smallest count that fits in a few splits even for
  // plans of thousands of cases.
  int low = from + 1, high = most;
  while (low < high) {
    const int middle = low + (high - low) / 2;
    if (longest(estimate_shards(plan, measure, middle, build_ns)) <= timeout_ns) {
      high = middle;
    } else {
      low = middle + 1;
    }
  }
  return low;
}

}  // namespace attnsweep::jobs
