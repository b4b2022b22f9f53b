#pragma once
// What profiling one case found, per forward, after attribution: plain data
// made by runner/profile/event_attribution.cpp, stored by the store (kernels
// and ops tables), read back by runner/storage/run_reader.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace attnsweep {

// One row of the `kernels` table: device activity of one name, per forward.
struct KernelStat {
  std::string name;
  std::string kind;                 // kernel, memcpy, memset
  double launches_per_forward = 0;
  double total_us = 0;              // summed duration per forward
  double mean_us = 0, min_us = 0, max_us = 0;  // per launch
  std::int64_t stream = -1;
  // Launch metadata Kineto reports for kernels (absent for copies, or when not reported).
  std::string grid, block;
  std::optional<int> registers_per_thread;
  std::optional<std::int64_t> shared_memory_bytes;
  std::optional<double> blocks_per_sm, warps_per_sm, est_occupancy_pct;
  // Hardware counters of this name's launches in the counter pass (measure.counters, issue 39),
  // per forward: DRAM bytes summed, shares (0..1) weighted as the case's are; empty when not read.
  std::optional<double> dram_read_bytes, dram_write_bytes, l2_hit_rate, sm_throughput, tensor_pipe;
};

// One row of the `ops` table: host-side activity of one name, per forward.
struct OpStat {
  std::string name;
  std::string kind;                 // op (aten::...), cuda_runtime, cuda_driver
  double calls_per_forward = 0;
  double self_cpu_us = 0;           // per forward, children excluded
  double total_cpu_us = 0;          // per forward, children included
};

// What the profiler saw per forward, after attribution (runner/profile).
struct ProfileSummary {
  int profiled_forwards = 0;
  int attempts = 0;
  bool counts_consistent = true;
  bool labels_recorded = true;      // every labelled forward (or replay) was seen by the profiler
  std::vector<int> kernels_each_forward, memcpy_each_forward, memset_each_forward;
  int cpu_ops_per_forward = 0;      // aten operator calls per forward
  int unattributed_device_events = 0;
  double kernel_time_us_per_forward = 0;  // sum of device activity durations
  std::vector<KernelStat> kernels;
  std::vector<OpStat> ops;
  // The kernels of the first profiled forward by name, in the order they started on
  // the GPU: how the counter pass names CUPTI's automatic ranges, which are numbered
  // ("0", "1", ...) in launch order (issue 39; seen on the H100). Not stored.
  std::vector<std::string> kernel_launch_order;
};

}  // namespace attnsweep
