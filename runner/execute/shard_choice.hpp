#pragma once
// Which shard a run is: --shard K/N on the command line, or the index a
// scheduler sets in the environment of each job of an array (Kubernetes
// indexed jobs: JOB_COMPLETION_INDEX, with N from --shards or ATTNSWEEP_SHARDS;
// Slurm arrays: SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT). Also the
// sweep id shared by the shards of one launch. docs/scale-out.md.
#include <functional>
#include <optional>
#include <string>

#include "runner/plan/shard.hpp"

namespace attnsweep::execute {

struct ShardChoice {
  ShardSpec spec;
  std::string source;  // "--shard", "JOB_COMPLETION_INDEX" or "SLURM_ARRAY_TASK_ID" (runs.shard_source)
};

// Reads an environment variable; empty optional when unset. Tests pass their own.
using EnvironmentLookup = std::function<std::optional<std::string>(const std::string& name)>;
std::optional<std::string> process_environment(const std::string& name);

// The shard of this run, or none. --shard wins over the environment; --shards
// N alone (with no index from anywhere) is refused, as is an index without a
// count, --shards N other than a Slurm array's task count, and a Slurm array of
// one task (a resubmitted task: its shard is not known). Throws BadInputError
// naming the option or variable and what is allowed.
std::optional<ShardChoice> choose_shard(const std::optional<std::string>& shard_option,
                                        const std::optional<int>& shards_option,
                                        const EnvironmentLookup& environment = process_environment);

// --sweep-id, else ATTNSWEEP_SWEEP_ID, else "slurm-<SLURM_ARRAY_JOB_ID>"; empty when none.
std::string choose_sweep_id(const std::string& sweep_id_option,
                            const EnvironmentLookup& environment = process_environment);

}  // namespace attnsweep::execute
