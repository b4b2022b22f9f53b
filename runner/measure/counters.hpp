#pragma once
// The hardware counters a config may ask for (measure.counters, issue 39) and how
// one counter pass's per-launch values become the case's per-pass figures and its
// kernels' per-name figures (docs/measurement.md, "Counters"). LibTorch- and
// CUPTI-free: the case runner reads the launches (runner/device/cupti_counters),
// this file says what to read and sums them.
#include <optional>
#include <string>
#include <vector>

#include "runner/common/hardware_counter.hpp"
#include "runner/profile/profile_summary.hpp"

namespace attnsweep {

// CUPTI's metrics behind the counters asked for: each counter's own (a counter
// with alternatives, the tensor pipes, names every one the chip may know; the
// caller keeps those CUPTI knows), and always the kernel's duration, the weight
// of the shares.
std::vector<std::string> counter_metric_candidates(const std::vector<Counter>& counters);

// One kernel launch of the counter pass: its name and the values of `metrics`.
struct CounterLaunch {
  std::string name;
  std::vector<double> values;
};

// A pass's figures, summed or weighted over its launches; empty where not asked
// or where CUPTI knew none of the counter's metrics.
struct PassCounters {
  int launches = 0;
  std::optional<double> kernel_us;          // summed durations of the launches (replayed)
  std::optional<double> dram_read_bytes, dram_write_bytes;
  std::optional<double> l2_hit_rate;        // 0..1: the kernels' hit rates weighted by the sectors each moved
  std::optional<double> sm_throughput;      // 0..1 of the SMs' peak, weighted by duration
  std::optional<double> tensor_pipe;        // 0..1 of the tensor pipes' peak, weighted by duration
};

// The same per kernel name (summed over its launches in the pass).
struct KernelCounterFigures {
  std::string name;
  int launches = 0;
  PassCounters figures;
};

struct CounterFigures {
  PassCounters pass;
  std::vector<KernelCounterFigures> kernels;  // in the order of first launch
};

// `metrics` names the values of each launch (those CUPTI knew, in order).
CounterFigures sum_counter_launches(const std::vector<std::string>& metrics, const std::vector<CounterLaunch>& launches);

// CUPTI's automatic ranges are numbered in launch order, not named: gives launch i the
// name `order[i]` (ProfileSummary::kernel_launch_order) when both count the same launches.
// False, names left as they are, when they do not (the pass launched otherwise than profiled).
bool name_launches_in_order(std::vector<CounterLaunch>& launches, const std::vector<std::string>& order);
// Whether the profile's kernels all ran on one stream: only then is the order they started in
// the order they were launched (kernels of two streams interleave by start time).
bool kernels_on_one_stream(const std::vector<KernelStat>& kernels);

// Puts the per-name figures on the profile's kernels of the same name, per forward
// (kernels only: copies and memsets are no ranges of the range profiler). Names the
// profile lacks are left out and listed in the returned text; empty when all matched.
std::string attach_kernel_counters(const CounterFigures& figures, std::vector<KernelStat>& kernels);

}  // namespace attnsweep
