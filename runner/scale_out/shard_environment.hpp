#pragma once
// What shards of one sweep must share to be merged into one run: the
// environment that changes results (runs.env_vars, the torch, CUDA and cuDNN
// versions, the device's name, its driver and attnsweep's version). A merged
// run measured half under ATTNSWEEP_TEST_SLOWDOWN, another torch or another GPU
// model would compare as one run and hide the difference. The host is not part
// of it: shards of one launch run on many machines (each shard's hostname stays
// in the merged run's run_devices).
#include <string>
#include <vector>

#include "runner/storage/run_reader.hpp"

namespace attnsweep::scale_out {

using storage::RunRow;
using storage::env_vars_of;

// Each result-changing fact where `run` differs from `reference`, in words:
// "env_vars ATTNSWEEP_TEST_SLOWDOWN 'naive', not unset", "torch_version
// '2.10.0', not '2.11.0'". Empty when both ran in one environment.
std::vector<std::string> shard_environment_differences(const RunRow& run, const RunRow& reference);

}  // namespace attnsweep::scale_out
