#pragma once
// How a sweep gets its run row: a new one (environment, ceilings, settings and
// the timing protocol in words), or an earlier one that --resume continues
// after checking that the config and device are the same.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runner/config/config.hpp"
#include "runner/device/environment.hpp"
#include "runner/execute/shard_choice.hpp"
#include "runner/plan/claims_match.hpp"
#include "runner/storage/readable_database.hpp"
#include "runner/storage/run_reader.hpp"
#include "runner/storage/store.hpp"

namespace attnsweep::execute {

struct NewRun {
  std::string config_path;
  const Config* config = nullptr;
  std::string config_sha256;
  Device device;                                  // resolved
  std::optional<EnvironmentInfo> probed;          // from a worker with --isolate; else collected here
  int planned_cases = 0;                          // this run's cases (its shard's)
  int sweep_cases = 0;                            // the whole plan's
  bool isolate = false;
  std::optional<ShardChoice> shard;
  std::string sweep_id;
  std::vector<Device> gpus;                       // --gpus: one worker each; empty for one device
  std::vector<ClaimMatch> claims;                 // the config's claims matched to the whole plan
};

// Inserts the run row and, for a run on one device, its run_devices row.
// Measures the device ceilings first on CUDA, except with --isolate or --gpus
// (the parent runs no kernels; each GPU's worker measures its own).
std::int64_t begin_new_run(storage::Store& store, const NewRun& run);

// The run --resume continues: `wanted` is a run id or "latest". Throws
// BadInputError when there is none, or when its config or device differ.
// A shard run resumes only as the same shard, a --gpus run only with --gpus
// (on any set of GPUs: each case records its own). `sweep_id`, when given
// (--sweep-id on the command line), must be the run's: a resumed run keeps its own.
// `op_libraries` (op_library_builds_of the config, now) must be the stored
// runs.op_libraries where both are known: a library rebuilt since the run
// started would measure another kernel under the same variant name.
// Reads only: `database` reads an older schema through a migrated copy, so a
// refused resume leaves the file as it was.
std::int64_t run_to_resume(const storage::ReadableDatabase& database, const std::string& wanted,
                           const std::string& config_path, const std::string& config_sha256, const Device& device,
                           const std::optional<ShardSpec>& shard = std::nullopt, bool with_gpus = false,
                           const std::optional<std::string>& sweep_id = std::nullopt,
                           const std::string& op_libraries = "");

// runs.op_libraries of a config, now: each op library's build, a fingerprint
// of the files its loader loads ("unreadable: why" for one that cannot be read).
std::string op_library_builds_of(const Config& config);

// The timing protocol of a run, in words (runs.timing_protocol).
std::string timing_protocol(const Device& device, const MeasureSettings& measure);

}  // namespace attnsweep::execute
