#pragma once
// How each case is measured. Defaults are the documented ones (docs/config.md).
#include <string>
#include <vector>

#include "runner/common/identities.hpp"

namespace attnsweep {

struct MeasureSettings {
  int warmup = 5;                  // unmeasured forwards before timing
  int profiled_forwards = 5;       // forwards per profiling session
  int max_profile_attempts = 3;    // re-profile while per-forward counts disagree
  int min_samples = 10;            // timed forwards, at least
  int max_samples = 2000;          // timed forwards, at most
  double target_rel_stdev = 0.02;  // stop once stdev/mean of the samples is under this
  double max_case_seconds = 10.0;  // stop timing a case after this much wall time
  double min_gpu_seconds = 0.05;   // and not before the kept samples add up to this much time
  bool l2_flush = true;            // CUDA: overwrite a buffer of 2x the L2 size before every sample
  bool cuda_graph = true;          // CUDA: also time replays of the forward captured as a graph
  // CUDA: the replays stop once their median's 95% interval half-width is at most this share of it
  // (after min_samples; no min_gpu_seconds: replays spread less than eager forwards)
  double graph_target_median_ci = 0.005;
  bool hide_launch_latency = true; // CUDA: hold the stream with a blocking kernel while the host enqueues
  double throttle_fraction = 0.75; // CUDA: samples under this share of the max SM clock are discarded
  bool accuracy_check = true;      // compare against a float64 reference
  bool traces = false;             // write a Chrome trace per case
  double case_timeout_s = 900;     // with --isolate: a worker running longer is killed (timeout)
  CaseOrder case_order = CaseOrder::plan;  // or shuffled: a permutation drawn from the seed
  MeasureRegime regime = MeasureRegime::sustained;  // CUDA: or burst, a cool-down before every sample
  double burst_cooldown_max_ms = 500;  // burst: the longest cool-down before one sample
  // burst: the most cool-down one case, and one measuring process, may spend in all; past it,
  // samples are taken without cooling down and the case says so (a GPU that never cools, e.g.
  // one shared with another process, made a 7 s night take 243 s: issue 21, item 4).
  double burst_cooldown_case_max_s = 20;
  double burst_cooldown_run_max_s = 300;
  // CUDA: after the eager samples, run the pass back to back for at least this many milliseconds
  // between two steps of NVML's energy counter: joules per pass and average power (docs/measurement.md,
  // "Energy"). 0, the default, turns it off: it adds this much time (and up to 0.4 s of waiting for the
  // counter) to every case.
  double energy_window_ms = 0;
  // CUDA: hardware counters read in a pass of their own after the timed samples (issue 39; names
  // from counter_names(): dram_bytes, l2_hit_rate, sm_throughput, tensor_pipe). Empty, the default,
  // turns it off: CUPTI replays every kernel of the pass once per counter pass it needs.
  std::vector<std::string> counters;

  static std::vector<std::string> keys();
};

}  // namespace attnsweep
