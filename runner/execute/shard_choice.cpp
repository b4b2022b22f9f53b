#include "runner/execute/shard_choice.hpp"

#include <cstdlib>
#include <regex>

#include "runner/common/errors.hpp"

namespace attnsweep::execute {
namespace {

// A whole number of at most 6 digits from a variable; throws naming it otherwise.
int whole_number(const std::string& name, const std::string& text) {
  if (!std::regex_match(text, std::regex("[0-9]{1,6}"))) {
    throw BadInputError(name + "=" + text + ": expected a whole number");
  }
  return std::stoi(text);
}

}  // namespace

std::optional<std::string> process_environment(const std::string& name) {
  const char* value = std::getenv(name.c_str());
  if (!value) return std::nullopt;
  return std::string(value);
}

std::optional<ShardChoice> choose_shard(const std::optional<std::string>& shard_option,
                                        const std::optional<int>& shards_option, const EnvironmentLookup& environment) {
  if (shard_option) {
    const ShardSpec spec = parse_shard(*shard_option);
    if (shards_option && *shards_option != spec.count) {
      throw BadInputError("--shards " + std::to_string(*shards_option) + " disagrees with --shard " + spec.label() +
                          "; give one of them");
    }
    return ShardChoice{spec, "--shard"};
  }
  if (const auto index = environment("JOB_COMPLETION_INDEX")) {
    std::optional<int> count = shards_option;
    std::string count_from = "--shards";
    if (!count) {
      const auto text = environment("ATTNSWEEP_SHARDS");
      if (!text) {
        throw BadInputError("JOB_COMPLETION_INDEX=" + *index + " is set (a Kubernetes indexed job) but not the "
                            "number of shards: pass --shards N or set ATTNSWEEP_SHARDS to the job's completions");
      }
      count = whole_number("ATTNSWEEP_SHARDS", *text);
      count_from = "ATTNSWEEP_SHARDS";
    }
    const int k = whole_number("JOB_COMPLETION_INDEX", *index);
    return ShardChoice{parse_shard(std::to_string(k) + "/" + std::to_string(*count),
                                   "JOB_COMPLETION_INDEX with " + count_from),
                       "JOB_COMPLETION_INDEX"};
  }
  if (const auto task = environment("SLURM_ARRAY_TASK_ID")) {
    const auto count_text = environment("SLURM_ARRAY_TASK_COUNT");
    if (!count_text) {
      throw BadInputError("SLURM_ARRAY_TASK_ID=" + *task + " is set but SLURM_ARRAY_TASK_COUNT is not; run inside "
                          "a Slurm job array (sbatch --array=0-N) or pass --shard K/N");
    }
    const int count = whole_number("SLURM_ARRAY_TASK_COUNT", *count_text);
    if (shards_option && *shards_option != count) {
      throw BadInputError("--shards " + std::to_string(*shards_option) + " disagrees with SLURM_ARRAY_TASK_COUNT=" +
                          *count_text + " (task " + *task + " of a Slurm job array, which sets the shard); drop "
                          "--shards, or give the shard with --shard K/N");
    }
    // A task resubmitted alone (sbatch --array=5) is a one-task array: as shard
    // 0/1 it would run the whole sweep, not the shard it stands for.
    if (count == 1) {
      throw BadInputError("SLURM_ARRAY_TASK_ID=" + *task + " is the only task of its Slurm job array "
                          "(SLURM_ARRAY_TASK_COUNT=1), as when one task is resubmitted (sbatch --array=" + *task +
                          "): which shard it stands for is not known; give it with --shard K/N (K counts from 0 in "
                          "the original array of N tasks), or --shard 0/1 to run the whole sweep");
    }
    // Arrays may start anywhere and step (--array=1-7:2): the shard is the task's position.
    const auto min_text = environment("SLURM_ARRAY_TASK_MIN");
    const auto step_text = environment("SLURM_ARRAY_TASK_STEP");
    const int first = min_text ? whole_number("SLURM_ARRAY_TASK_MIN", *min_text) : 0;
    const int step = step_text ? whole_number("SLURM_ARRAY_TASK_STEP", *step_text) : 1;
    if (step < 1) throw BadInputError("SLURM_ARRAY_TASK_STEP=" + *step_text + ": expected a whole number of 1 or more");
    const int id = whole_number("SLURM_ARRAY_TASK_ID", *task);
    if (id < first || (id - first) % step != 0) {
      throw BadInputError("SLURM_ARRAY_TASK_ID=" + *task + " is not a task of the array starting at " +
                          std::to_string(first) + " with step " + std::to_string(step));
    }
    const std::string spec = std::to_string((id - first) / step) + "/" + std::to_string(count);
    return ShardChoice{parse_shard(spec, "SLURM_ARRAY_TASK_ID"), "SLURM_ARRAY_TASK_ID"};
  }
  if (shards_option) {
    throw BadInputError("--shards " + std::to_string(*shards_option) + " needs the shard's index: --shard K/N, or "
                        "JOB_COMPLETION_INDEX (Kubernetes indexed jobs) in the environment");
  }
  // A count without an index would run the whole sweep in every job of the array.
  if (const auto count = environment("ATTNSWEEP_SHARDS")) {
    throw BadInputError("ATTNSWEEP_SHARDS=" + *count + " is set but no shard index: set JOB_COMPLETION_INDEX (a "
                        "Kubernetes indexed job sets it) or pass --shard K/N; unset ATTNSWEEP_SHARDS to run the whole sweep");
  }
  return std::nullopt;
}

std::string choose_sweep_id(const std::string& sweep_id_option, const EnvironmentLookup& environment) {
  if (!sweep_id_option.empty()) return sweep_id_option;
  if (const auto id = environment("ATTNSWEEP_SWEEP_ID"); id && !id->empty()) return *id;
  if (const auto job = environment("SLURM_ARRAY_JOB_ID"); job && !job->empty()) return "slurm-" + *job;
  return "";
}

}  // namespace attnsweep::execute
