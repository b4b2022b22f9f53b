#pragma once
// attnsweep merge: the shard databases of one sweep (attnsweep run --shard K/N)
// into one run of another database, the merged run (runs.shard_source 'merge').
// Inputs are opened read-only and never changed. Every check runs before
// anything is written, and all writes are one transaction on the output, so a
// refused or failed merge leaves it as it was; a merge that finds nothing new
// writes nothing at all. docs/scale-out.md, docs/cli.md.
#include <cstdint>
#include <string>
#include <vector>

#include "runner/common/identities.hpp"
#include "runner/scale_out/merged_run_source.hpp"  // kMergedRunSource, which callers of a merge read

namespace attnsweep::scale_out {

// Where one shard of the sweep stands in the merged run after a merge.
struct ShardMerge {
  enum class State {
    merged,          // this merge took cases from it
    already_merged,  // given again: every case of it was in the merged run already
    merged_earlier,  // not given this time; an earlier merge took it
    missing,         // no run of it has been merged yet
  };
  int index = 0;
  State state = State::missing;
  // The shard run it came from (merged_shards): the file as given, its run_id
  // and status there. Empty for a missing shard.
  std::string source_db;
  std::int64_t source_run_id = 0;
  std::string source_status;
  int planned_cases = 0;  // the shard's part of the plan
  int merged_cases = 0;   // of those, in the merged run now
  int cases_added = 0;    // by this merge

  bool complete() const { return state != State::missing && merged_cases == planned_cases; }
};

struct MergeReport {
  std::int64_t run_id = 0;  // the merged run in the output database
  bool created = false;     // this merge made the merged run
  int shard_count = 0;
  int sweep_cases = 0;      // cases of the whole plan
  int merged_cases = 0;     // of those, in the merged run now
  int cases_added = 0;      // by this merge
  std::vector<ShardMerge> shards;  // one per shard index, 0 to shard_count - 1
  RunStatus status = RunStatus::incomplete;  // done once every case of every shard is in

  std::vector<int> missing_shards() const;
};

// Merges every run of the databases `inputs` (each a shard run of one sweep:
// the same config, shard count, split version, sweep id, device kind and
// timing protocol) into the merged run of that sweep in `out_path`: the one
// that already holds any of them, else one still incomplete that none of them
// collides with, else a new one. The output is created when absent (and
// removed again when the merge fails); its other runs are left as they are.
// A case the merged run has already (by plan_index) is skipped, so merging a
// shard twice adds nothing. Throws BadInputError, one line naming the file,
// the run and what to do, for: a missing or foreign input, another schema
// version, a run that is not a shard, shards of another sweep, two runs of one
// shard (among the inputs, or against the one the merged run took), a stored
// case that is not the plan's for its shard, and an output that is an input
// or not an attnsweep database.
MergeReport merge_shards(const std::string& out_path, const std::vector<std::string>& inputs);

}  // namespace attnsweep::scale_out
