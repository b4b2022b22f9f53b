#pragma once
// One `attnsweep run`: validate everything the user gave, begin or resume a
// run, run every case not stored yet through an executor in the configured
// order, store each as it finishes, and end the run done or interrupted.
// Printing is the caller's: the outcome says where the results are.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "runner/common/identities.hpp"
#include "runner/execute/shard_choice.hpp"
#include "runner/storage/run_reader.hpp"

namespace attnsweep::execute {

// What is done with a run's database when the run ends, done, interrupted or
// failed (a failed job's partial results count): run --publish copies it out
// (runner/workflows/publish). `check` runs before the sweep, among the checks
// of bad input (BadInputError); `ended` gets the database and the run id. Its
// exception is the sweep's when the run ended done or interrupted, and is only
// logged when the run failed (the failure is what the caller sees).
struct RunEnd {
  std::function<void(const std::string& db_path)> check;
  std::function<void(const std::string& db_path, std::int64_t run_id)> ended;
};

struct SweepRequest {
  std::string config_path;
  std::string db_path = "results.db";
  std::optional<Device> device;  // --device; else the config's
  std::string traces_dir;        // --traces; empty: the config decides
  std::optional<std::string> resume;  // a run id or "latest": continue that run
  bool isolate = false;          // one worker process per case
  std::optional<ShardChoice> shard;   // run only this part of the plan
  std::string sweep_id;               // shared by the shards of one launch
  bool sweep_id_given = false;        // by --sweep-id (not the environment): with --resume it must be the run's
  std::optional<std::string> gpus;    // --gpus: "all" or "0,1,...": one worker process per GPU
  std::optional<RunEnd> at_end;       // --publish: copy the database and traces out when the run ends
  bool new_database = false;          // db_path must not exist yet (nightly's own name): refused if it does
  double progress_interval_seconds = 30;  // --progress-interval: between two progress lines off a terminal; 0: none
};

struct SweepOutcome {
  std::int64_t run_id = 0;
  RunStatus status = RunStatus::done;  // done or interrupted
  int planned_cases = 0;
  Device device;                       // resolved: the one a --resume must name
  std::string traces_dir;              // empty when traces are off
  std::vector<storage::CaseRow> cases; // every stored case of the run, old and new, in plan order
  std::optional<ShardChoice> shard;    // as requested; what set it is in shard->source
  int sweep_cases = 0;                 // cases of the whole plan
  std::vector<Device> gpus;            // with --gpus: the devices used
};

// Throws BadInputError for bad input (nothing stored then), anything else for
// a failure while running (the run is then marked failed).
SweepOutcome run_sweep(const SweepRequest& request);

}  // namespace attnsweep::execute
