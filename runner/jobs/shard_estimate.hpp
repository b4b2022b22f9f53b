#pragma once
// How long each shard of a launch is expected to run, against the job's
// timeout: the cost model's time of the shard's plan on one H200
// (runner/plan/cost.hpp) plus a fixed allowance for the job's start (image
// pull, CUDA initialisation). HF Jobs kills a job at its timeout (30 minutes
// unless told otherwise), so a shard that will not fit is refused before
// anything starts.
#include <cstdint>
#include <optional>
#include <vector>

#include "runner/config/measure_settings.hpp"
#include "runner/plan/plan.hpp"
#include "runner/plan/shard.hpp"

namespace attnsweep::jobs {

// Image pull, container start and CUDA initialisation of one job (the image
// carries a built attnsweep: nothing is compiled in the job).
inline constexpr std::int64_t kJobStartAllowanceNs = 180'000'000'000;
// launch --from-source: on top of the start, the job installs the packages
// with apt-get and builds attnsweep (container/job-from-source.sh). An estimate
// until timed on HF Jobs: apt about 1-3 min, the build 46-174 s on our 16-core
// GPU machine (cache warm or cold); 10 minutes leaves room for a slower machine.
inline constexpr std::int64_t kFromSourceBuildAllowanceNs = 600'000'000'000;

struct ShardEstimate {
  ShardSpec shard;
  int cases = 0;
  std::int64_t model_ns = 0;     // the cost model's expected time of its cases
  std::int64_t build_ns = 0;     // kFromSourceBuildAllowanceNs with --from-source, else 0
  std::int64_t expected_ns = 0;  // model_ns + kJobStartAllowanceNs + build_ns
};

// One estimate per shard of `count` (count <= the plan's cases).
// `build_ns`: the time a job spends building attnsweep before it runs (0 with our image).
std::vector<ShardEstimate> estimate_shards(const Plan& plan, const MeasureSettings& measure, int count,
                                           std::int64_t build_ns = 0);

// The largest expected time among the shards.
std::int64_t longest(const std::vector<ShardEstimate>& estimates);

// The smallest shard count above `from` whose longest shard fits in
// `timeout_ns` (found by bisection), or none when no count up to the plan's
// cases (at most kMaxShards) does: a single case is too long.
std::optional<int> shards_that_fit(const Plan& plan, const MeasureSettings& measure, int from, std::int64_t timeout_ns,
                                   std::int64_t build_ns = 0);

}  // namespace attnsweep::jobs
