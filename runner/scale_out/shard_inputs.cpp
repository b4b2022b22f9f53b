#include "runner/scale_out/shard_inputs.hpp"

#include <SQLiteCpp/SQLiteCpp.h>
#include <sys/stat.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "runner/common/errors.hpp"
#include "runner/common/sha256.hpp"
#include "runner/config/config.hpp"
#include "runner/plan/cost.hpp"
#include "runner/scale_out/merged_run_source.hpp"
#include "runner/scale_out/shard_environment.hpp"
#include "runner/storage/open_for_reading.hpp"
#include "runner/storage/older_schema.hpp"  // older_schema_version: RunReader has named any other problem
#include "runner/storage/schema_version.hpp"

namespace attnsweep::scale_out {

using storage::DamagedDatabaseError;
using storage::RunReader;
using storage::kSchemaVersion;
using storage::older_schema_version;
using storage::open_for_reading;

bool is_merged_run(const RunRow& run) { return run.shard_source == kMergedRunSource; }
bool is_shard_run(const RunRow& run) { return run.shard_index && run.shard_count && !is_merged_run(run); }

namespace {

// RunReader refuses what is missing, foreign, newer or older; an older version
// gets merge's own words, since a migration would not give it shard runs.
RunReader open_input(const std::string& path) {
  try {
    return RunReader(path);
  } catch (const BadInputError&) {
    const std::optional<int> version = older_schema_version(path);
    if (!version) throw;
    throw BadInputError(path + ": database schema version " + std::to_string(*version) + ", but merge takes version " +
                        std::to_string(kSchemaVersion) + " only (this attnsweep's); inputs are never migrated: "
                        "run that shard again with this attnsweep");
  }
}

void refuse_unless_shard(const std::string& path, const RunRow& run) {
  if (is_shard_run(run)) return;
  const std::string id = path + ": run " + std::to_string(run.run_id);
  if (is_merged_run(run)) {
    throw BadInputError(id + " is a merged run (attnsweep merge), not a shard; merge the shard databases it was made "
                        "from instead");
  }
  throw BadInputError(id + " is not a shard (it ran without --shard); merge takes databases of attnsweep run --shard "
                      "K/N that hold shard runs only");
}

// A damaged shard is refused before anything is written, by its name (SQLite's
// own "database disk image is malformed" names no file).
void refuse_damaged(const std::string& path) {
  std::string problem;
  try {
    SQLite::Database db = open_for_reading(path, kBusyTimeoutMs);
    problem = db.execAndGet("PRAGMA quick_check(1)").getString();
  } catch (const SQLite::Exception& error) {
    problem = error.what();
  }
  if (problem == "ok") return;
  for (char& c : problem) c = (c == '\n' || c == '\r') ? ' ' : c;
  throw BadInputError(path + ": the database is damaged (PRAGMA quick_check: " + problem + "); nothing was merged: "
                      "run that shard again, or leave it out");
}

}  // namespace

std::vector<ShardSource> read_inputs(const std::vector<std::string>& inputs) {
  std::vector<ShardSource> sources;
  for (const auto& path : inputs) {
    const RunReader reader = open_input(path);
    refuse_damaged(path);
    const std::vector<RunRow> runs = reader.runs();
    if (runs.empty()) {
      throw BadInputError(path + ": holds no runs, so no shard to merge; give the databases of attnsweep run --shard K/N");
    }
    for (const RunRow& run : runs) {
      refuse_unless_shard(path, run);
      // Every value merge copies, in its domain: a damaged shard is refused by
      // file, run and case before anything is written (issue 33, items 7, 8, 11).
      reader.check_run(run.run_id);
      sources.push_back({path, run, reader.cases(run.run_id)});
    }
  }
  return sources;
}

namespace {

std::string describe_sweep_id(const std::string& sweep_id) {
  return sweep_id.empty() ? "no sweep id" : "sweep id " + quoted(sweep_id);
}

}  // namespace

// What makes `run` part of another sweep than `reference`, in words; empty when
// both are of one sweep (the same config, shard count, split, launch, device
// kind and timing protocol). Holds for shard runs and merged runs alike.
std::string sweep_difference(const RunRow& run, const RunRow& reference) {
  if (run.config_sha256 != reference.config_sha256) {
    return "another config (sha256 " + run.config_sha256.substr(0, 12) + ", not " +
           reference.config_sha256.substr(0, 12) + ")";
  }
  if (run.shard_count != reference.shard_count) {
    return "another shard count (N = " + std::to_string(run.shard_count.value_or(0)) + ", not " +
           std::to_string(reference.shard_count.value_or(0)) + ")";
  }
  if (run.shard_split != reference.shard_split) {
    return "another split version (" + quoted(run.shard_split) + ", not " + quoted(reference.shard_split) + ")";
  }
  if (run.sweep_id != reference.sweep_id) {
    return "another launch (" + describe_sweep_id(run.sweep_id) + ", not " + describe_sweep_id(reference.sweep_id) + ")";
  }
  if (run.device.kind() != reference.device.kind()) {
    return "another device kind (" + run.device.to_string() + ", not " + reference.device.to_string() + ")";
  }
  if (run.timing_protocol != reference.timing_protocol) {
    return "another timing protocol (" + quoted(run.timing_protocol) + ", not " + quoted(reference.timing_protocol) + ")";
  }
  return "";
}

namespace {

Sweep sweep_of(const ShardSource& first) {
  if (first.run.shard_split != kShardSplitVersion) {
    throw BadInputError(first.name() + " was split by " + quoted(first.run.shard_split) + ", but this attnsweep splits " +
                        "by " + quoted(kShardSplitVersion) + " and cannot check its cases; merge with the attnsweep "
                        "that ran the shards");
  }
  // A config of another attnsweep version may not parse: ConfigError names the run.
  const Config config = parse_config(first.run.config_yaml, first.name() + " config");
  Sweep sweep{first.run, make_plan(config), {}};
  sweep.parts = split_into_shards(sweep.plan, config.measure, first.count());
  return sweep;
}

[[noreturn]] void refuse_inconsistent(const ShardSource& source, const std::string& why) {
  throw BadInputError(source.name() + ": " + why + "; the database is not what attnsweep run --shard " +
                      shard_label(source.index(), source.count()) + " of its config wrote: leave it out");
}

// The run's own columns and every stored case agree with the shard's part of the plan.
void check_consistent(const ShardSource& source, const Sweep& sweep) {
  const RunRow& run = source.run;
  if (sha256_hex(run.config_yaml) != run.config_sha256) refuse_inconsistent(source, "its config text does not match its config_sha256");
  if (run.run_uuid.empty()) refuse_inconsistent(source, "it has no run_uuid");
  if (source.index() < 0 || source.index() >= sweep.shard_count()) refuse_inconsistent(source, "its shard index is out of range");
  const std::vector<int>& part = sweep.parts[static_cast<std::size_t>(source.index())];
  if (run.sweep_cases != sweep.sweep_cases()) {
    refuse_inconsistent(source, "it counts " + std::to_string(run.sweep_cases.value_or(0)) + " cases in the sweep, its "
                        "config plans " + std::to_string(sweep.sweep_cases()));
  }
  if (run.planned_cases != static_cast<int>(part.size())) {
    refuse_inconsistent(source, "it planned " + std::to_string(run.planned_cases) + " cases, the shard has " +
                        std::to_string(part.size()));
  }
  const std::set<int> in_part(part.begin(), part.end());
  for (const CaseRow& stored : source.cases) {
    const Case& c = stored.identity;
    if (!in_part.count(c.plan_index)) {
      refuse_inconsistent(source, "its case at plan_index " + std::to_string(c.plan_index) + " (" + c.label() +
                          ") is not one of the shard's");
    }
    const Case& planned = sweep.plan.cases[static_cast<std::size_t>(c.plan_index)];
    if (!c.same_measurement(planned)) {
      refuse_inconsistent(source, "its case at plan_index " + std::to_string(c.plan_index) + " is " + c.label() +
                          ", but the config plans " + planned.label() + " there");
    }
  }
}

// Each shard comes from one run: the same run given twice is taken once, two runs of one shard are refused.
void refuse_two_runs_of_one_shard(const std::vector<ShardSource>& sources) {
  std::map<int, const ShardSource*> first_of_shard;
  for (const ShardSource& source : sources) {
    const auto [first, inserted] = first_of_shard.emplace(source.index(), &source);
    if (inserted || first->second->run.run_uuid == source.run.run_uuid) continue;
    throw BadInputError(source.name() + " and " + first->second->mention() + " are two runs of one shard (run_uuid " +
                        source.run.run_uuid.substr(0, 8) + "... and " + first->second->run.run_uuid.substr(0, 8) +
                        "...); a shard is merged from one run: give only the database of the one to keep");
  }
}

}  // namespace

// "a, b, c and 2 more": the first differences of two environments.
std::string first_differences(const std::vector<std::string>& differences) {
  constexpr std::size_t kShown = 3;
  std::string text;
  for (std::size_t i = 0; i < differences.size() && i < kShown; ++i) text += (i ? "; " : "") + differences[i];
  if (differences.size() > kShown) text += " and " + std::to_string(differences.size() - kShown) + " more";
  return text;
}

namespace {

// Every input measured in the first one's environment (runner/scale_out/shard_environment.hpp).
void refuse_mixed_environments(const std::vector<ShardSource>& sources) {
  const ShardSource& first = sources.front();
  for (const ShardSource& source : sources) {
    const std::vector<std::string> differences = shard_environment_differences(source.run, first.run);
    if (differences.empty()) continue;
    throw BadInputError(source.name() + " ran in another environment than " + first.mention() + ": " +
                        first_differences(differences) + "; " + kOneEnvironment + ": run that shard again as the "
                        "others ran");
  }
}

}  // namespace

Sweep check_one_sweep(const std::vector<ShardSource>& sources) {
  const ShardSource& first = sources.front();
  for (const ShardSource& source : sources) {
    const std::string difference = sweep_difference(source.run, first.run);
    if (!difference.empty()) {
      throw BadInputError(source.name() + " is of another sweep than " + first.mention() + ": " + difference +
                          "; merge the shards of one sweep (one config, one N, one launch) at a time");
    }
  }
  refuse_mixed_environments(sources);
  const Sweep sweep = sweep_of(first);
  for (const ShardSource& source : sources) check_consistent(source, sweep);
  refuse_two_runs_of_one_shard(sources);
  return sweep;
}

void refuse_output_among_inputs(const std::string& out_path, const std::vector<std::string>& inputs) {
  struct stat out {};
  if (::stat(out_path.c_str(), &out) != 0) return;  // absent: it will be created, so it is no input
  for (const auto& input : inputs) {
    struct stat in {};
    if (::stat(input.c_str(), &in) == 0 && in.st_dev == out.st_dev && in.st_ino == out.st_ino) {
      throw BadInputError(out_path + ": the output is also an input (" + input + "); merge into another database "
                          "(inputs are only read)");
    }
  }
}

}  // namespace attnsweep::scale_out
