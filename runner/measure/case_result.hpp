#pragma once
// Everything measured for one case: plain data that flows to the store.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runner/common/identities.hpp"
#include "runner/common/numerics.hpp"
#include "runner/measure/counters.hpp"
#include "runner/measure/statistics.hpp"
#include "runner/measure/stop_reason.hpp"
#include "runner/measure/validity_reason.hpp"
#include "runner/plan/case.hpp"
#include "runner/profile/profile_summary.hpp"

namespace attnsweep {

struct TimingSample {
  std::optional<double> gpu_time_us;  // CUDA events around the forward
  std::optional<double> cpu_time_us;  // wall time of the forward on the CPU device
  std::optional<double> host_dispatch_us;  // time for the forward call to return (eager only)
  SampleMode mode = SampleMode::eager;  // or graph: a replay of the captured forward
  std::optional<double> sm_clock_mhz; // read right after the sample
  bool throttled = false;             // clock under the throttle fraction: not in the statistics
  bool blocked = false;               // a blocking kernel held the stream while the host enqueued
  bool block_timed_out = false;       // the forward waited on the GPU: the block gave up (not kept)
  std::optional<std::uint64_t> clock_event_reasons;  // NVML's reasons bits, read with the clock (nvml::reasons)
};

// Wall seconds spent on each part of a case: where a sweep's time goes.
struct PhaseSeconds {
  double setup = 0;     // inputs (drawn, or reused from the previous case) and the support check
  double accuracy = 0;  // the forward compared against float64
  double warmup = 0;    // unmeasured forwards
  double timing = 0;    // eager samples
  double graph = 0;     // capture and graph-replay samples
  double profile = 0;   // profiling sessions and attribution
};

struct CaseResult {
  CaseStatus status = CaseStatus::ok;
  std::string error_message;
  std::string sdpa_backend;   // for sdpa_* variants: the backend that ran
  Device device;              // resolved: cpu or cuda:N
  std::string gpu_uuid;       // the GPU that measured the case (GPU-...); empty on the CPU
  std::string timer;          // cuda_event or steady_clock
  std::optional<StopReason> stop_reason;  // eager sampling's end; empty for a case that was not timed
  std::optional<StopReason> graph_stop_reason;  // the CUDA-graph replays' end; empty without replays
  std::optional<SampleStatistics> gpu_time_us;
  std::optional<SampleStatistics> cpu_time_us;
  std::optional<double> cpu_dispatch_us_median;
  std::optional<double> rel_error;  // fp8: against float64 of the bf16 draw before quantisation
  std::optional<double> rel_error_dequantized;  // fp8 only: against float64 of the dequantised inputs
  std::optional<NumericsVerdict> numerics;  // empty when the accuracy check did not run
  std::optional<double> numerics_bound;     // the dtype's bound the verdict used
  // Backward passes (issue 23; not measured yet, so empty): dq, dk and dv against
  // float64 autograd, and for sdpa_* the backend that ran the backward.
  std::optional<double> grad_rel_error_q, grad_rel_error_k, grad_rel_error_v;
  std::string sdpa_backend_backward;
  // The energy window (measure.energy_window_ms; docs/measurement.md, "Energy"):
  // joules per pass and the average power between two steps of NVML's energy
  // counter, the host seconds between those steps and the passes run in them.
  // Empty on the CPU, where NVML has no counter, for backward cases, and when off.
  std::optional<double> energy_j, energy_power_w, energy_window_s;
  std::optional<int> energy_passes;
  // Hardware counters (measure.counters, issue 39): one more pass under CUPTI's range
  // profiler after the profile phase, never among the timed samples. Empty when not asked;
  // where asked but not read, counters_why_not says why in one line. counters_seconds is
  // the counter pass's wall time (CUPTI replays each kernel counter_replay_passes times).
  std::optional<PassCounters> counters;
  std::string counters_why_not;
  std::optional<double> counters_seconds;
  std::optional<int> counter_replay_passes;
  std::optional<std::int64_t> peak_mem_bytes;
  double flops = 0;
  double min_bytes = 0;
  std::optional<double> tflops;
  std::optional<double> bandwidth_gbps;
  std::string trace_path;
  std::optional<ProfileSummary> profile;  // absent when the case did not run
  std::vector<TimingSample> samples;      // eager and graph samples, in the order taken
  std::optional<SampleStatistics> graph_time_us;  // CUDA-graph replays
  std::string graph_error;                // why the graph was not timed
  // The graph checks (docs/measurement.md, "Validity"): kernels and copies one
  // profiled replay launched, and the replays' output against the eager output.
  std::optional<int> graph_launches_per_replay;
  std::optional<double> graph_output_rel_diff;  // NaN when the replays' output is not finite
  // `ok`, or `suspect` with its reasons; empty for a case that was not timed.
  std::string validity;
  std::vector<ValidityReason> validity_reasons;
  std::optional<double> sm_clock_mhz_mean;
  int throttled_samples = 0;
  // Shares of the kept eager samples read under a power cap or a thermal
  // slowdown (nvml::reasons::kPowerCap, kThermalCap); empty when NVML gave no reasons.
  std::optional<double> power_cap_share, thermal_cap_share;
  double cooldown_seconds = 0;  // burst regime: wall seconds spent cooling down before samples
  bool cooldown_budget_exhausted = false;  // burst: the case's or the run's cool-down allowance ran out
  // Compute processes on the GPU besides this one, the most seen at the case's
  // start and end (NVML); empty on the CPU or without NVML (gpu_sharing.hpp).
  std::optional<int> other_processes;
  std::optional<bool> launch_latency_hidden;  // CUDA: whether the kept samples were blocked
  std::vector<std::string> warnings;      // e.g. inconsistent kernel counts
  double wall_seconds = 0;
  PhaseSeconds phases;
  // The failure left this process's CUDA context unusable (a device-side assert,
  // an illegal memory access): no later case can run in this process. Not stored.
  bool device_unusable = false;
};

}  // namespace attnsweep
