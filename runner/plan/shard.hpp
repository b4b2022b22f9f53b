#pragma once
// Splitting a plan into work that runs in parallel: shards (one job each of a
// scheduler's array: Kubernetes indexed jobs, Slurm arrays, Hugging Face Jobs)
// and the units of the multi-GPU queue. Deterministic: the same config gives
// the same split on every machine and every build (integer costs, cost.hpp;
// ties broken by plan index). docs/scale-out.md.
#include <cstdint>
#include <string>
#include <vector>

#include "runner/config/measure_settings.hpp"
#include "runner/plan/plan.hpp"

namespace attnsweep {

// Part `index` (0-based) of `count`.
struct ShardSpec {
  int index = 0;
  int count = 1;
  std::string label() const { return std::to_string(index) + "/" + std::to_string(count); }  // "1/3"
  bool operator==(const ShardSpec& other) const { return index == other.index && count == other.count; }
  bool operator!=(const ShardSpec& other) const { return !(*this == other); }
};

// The largest shard count accepted: more shards than this is surely a mistake.
inline constexpr int kMaxShards = 10000;

// "K/N" with 0 <= K < N <= kMaxShards; throws BadInputError naming `option` and the allowed form.
ShardSpec parse_shard(const std::string& text, const std::string& option = "--shard");

// Cases that run back to back in one process: those of one shape, dtype and
// mask share their inputs and float64 reference. A unit is such a group, or a
// single case where groups are too coarse to balance.
struct WorkUnit {
  std::vector<int> plan_indexes;  // in plan order
  std::int64_t cost_ns = 0;       // expected wall time (cost.hpp), the group's reference counted once
};

// The units for `parallel` workers: the plan's groups, each split into single
// cases when it costs more than total / (parallel x granularity), and more
// groups split (the costliest first) until there are at least `parallel`
// units or nothing left to split. Returned longest first (cost, then the first
// plan index).
std::vector<WorkUnit> work_units(const Plan& plan, const MeasureSettings& measure, int parallel, int granularity = 1);

// The plan indexes of every shard: the work units handed out longest first,
// each to the shard with the least expected time so far (the lowest index on a
// tie). Units are whole groups where that keeps the busiest shard within 15%
// of an even share, else groups split finer (granularity 2, 4, 8). Each list
// is in plan order. Shards are empty only when the plan has fewer cases
// than `count`.
std::vector<std::vector<int>> split_into_shards(const Plan& plan, const MeasureSettings& measure, int count);

// Expected wall time of running the whole plan in one process (cost.hpp).
std::int64_t expected_plan_ns(const Plan& plan, const MeasureSettings& measure);

// The plan's float64 checks on a CPU or a GPU by the cost model
// (expected_reference_check_ns), one per group of cases that share inputs:
// their expected time, each capped at reference_limit_ns (a longer one is not
// computed), and how many groups are over that limit.
struct ReferenceChecks {
  std::int64_t ns = 0;
  int over_limit = 0;
};
ReferenceChecks expected_reference_checks(const Plan& plan, const MeasureSettings& measure, bool cuda);

// The cases of one shard, in plan order, each keeping its plan_index in the
// whole plan. Throws BadInputError, naming `config_path`, when there are more
// shards than cases (whichever the shard: some would have nothing to run).
Plan shard_plan(const Plan& plan, const MeasureSettings& measure, const ShardSpec& shard, const std::string& config_path);

}  // namespace attnsweep
