#pragma once
// How a sweep gets its run row: a new one (environment, ceilings, settings and
// the timing protocol in words), or an earlier one that --resume continues
// after checking that the config and device are the same.
#include <cstdint>
#include <optional>
#include <string>

#include "runner/config/config.hpp"
#include "runner/device/environment.hpp"
#include "storage/run_reader.hpp"
#include "storage/store.hpp"

namespace attnsweep::execute {

struct NewRun {
  std::string config_path;
  const Config* config = nullptr;
  std::string config_sha256;
  Device device;                                  // resolved
  std::optional<EnvironmentInfo> probed;          // from a worker with --isolate; else collected here
  int planned_cases = 0;
  bool isolate = false;
};

// Inserts the run row. Measures the device ceilings first on CUDA, except with
// --isolate (the parent runs no kernels).
std::int64_t begin_new_run(storage::Store& store, const NewRun& run);

// The run --resume continues: `wanted` is a run id or "latest". Throws
// BadInputError when there is none, or when its config or device differ.
std::int64_t run_to_resume(const storage::RunReader& reader, const std::string& wanted,
                           const std::string& config_path, const std::string& config_sha256, const Device& device);

// The timing protocol of a run, in words (runs.timing_protocol).
std::string timing_protocol(const Device& device, const MeasureSettings& measure);

}  // namespace attnsweep::execute
