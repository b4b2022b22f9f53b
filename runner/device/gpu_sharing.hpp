#pragma once
// Whether other processes compute on the GPU attnsweep measures. A second
// process's kernels share the SMs, memory bandwidth and power budget: every
// time measured meanwhile is slower by an unknown amount (a shared H200 made a
// 28-case nightly 30-140% slower and still pass, issue 21, item 4). Read from
// NVML before a run and around each case; stored, warned about at once, and
// compare and nightly judge no time of such a case.
#include <algorithm>
#include <optional>
#include <vector>

#include "runner/common/identities.hpp"

namespace attnsweep {

struct GpuSharing {
  std::optional<int> other_processes;       // compute processes on the GPU besides this one
  std::optional<double> utilization_pct;    // NVML's GPU utilization (any process) when read
};

// The processes in `pids` (the driver's list for the GPU) other than this one.
// The caller holds a CUDA context on that GPU, so it is in the list: when its
// own pid is not (inside a PID namespace the driver lists the host's pids),
// one entry is taken to be this process.
inline int other_processes_than_self(const std::vector<unsigned>& pids, unsigned self_pid) {
  const auto self = static_cast<int>(std::count(pids.begin(), pids.end(), self_pid));
  const int others = static_cast<int>(pids.size()) - (self > 0 ? self : 1);
  return std::max(others, 0);
}

// Reads both for a CUDA device (making sure this process has its context there
// first); empty values on the CPU or without NVML.
GpuSharing read_gpu_sharing(const Device& device);

}  // namespace attnsweep
