#pragma once
// The GPU case the storage tests store by hand, without running one: one
// builder, so that the store's and the run reader's tests write the same
// profiled sdpa_cudnn forward, and each adds only what it reads back.
#include <utility>

#include "runner/measure/case_result.hpp"
#include "runner/measure/statistics.hpp"
#include "runner/plan/case.hpp"

namespace attnsweep::testing {

// sdpa_cudnn bf16 causal at `plan_index` of `shape` on cuda:0, forward: timed by
// CUDA events (7 samples, median 80 us) through cudnn_attention, 1e9 FLOPs at
// 12.5 TFLOP/s, profiled over 2 forwards of 57.8 us of kernels, no copy and one
// memset each, and 6 host operators, the first the cuDNN forward. The test adds
// the kernels (and how many each forward launched), the other ops and the samples.
inline std::pair<Case, CaseResult> profiled_cudnn_case(int plan_index, const Shape& shape) {
  Case c{plan_index, "sdpa_cudnn", shape, Dtype::bf16, true};
  CaseResult r;
  r.device = Device::cuda(0);
  r.timer = "cuda_event";
  r.sdpa_backend = "cudnn_attention";
  r.stop_reason = StopReason::target_rel_stdev;
  r.gpu_time_us = summarize({80, 81, 82, 79, 80, 84, 78});
  r.cpu_dispatch_us_median = 25.5;
  r.rel_error = 2e-3;
  r.peak_mem_bytes = 123456789;
  r.flops = 1e9;
  r.min_bytes = 1e6;
  r.tflops = 12.5;
  r.bandwidth_gbps = 100;
  ProfileSummary profile;
  profile.profiled_forwards = 2;
  profile.memcpy_each_forward = {0, 0};
  profile.memset_each_forward = {1, 1};
  profile.cpu_ops_per_forward = 6;
  profile.kernel_time_us_per_forward = 57.8;
  profile.ops = {{"aten::_cudnn_attention_forward", "op", 1, 30.4, 130.5}};
  r.profile = profile;
  return {c, r};
}

// `kernel` with the launch metadata Kineto gave cuDNN's attention kernel on the
// H200: a grid of 132 blocks of 384 threads, 168 registers per thread and 134144
// bytes of shared memory (occupancy figures are the test's to add).
inline KernelStat launched_as_cudnn_attention(KernelStat kernel) {
  kernel.grid = "[132,1,1]";
  kernel.block = "[384,1,1]";
  kernel.registers_per_thread = 168;
  kernel.shared_memory_bytes = 134144;
  return kernel;
}

// What a counter pass reads for that case (issue 39, schema 21), as the study's shape on the
// H200 gave it (50.35 MB read, 8.72 MB written) and shares with exact binary fractions:
// one launch of 55 us, 3 replay passes, 0.2 s; L2 hits 0.25, SM busy 0.5, tensor pipe 0.75.
inline void read_counters(CaseResult& r) {
  PassCounters counters;
  counters.launches = 1;
  counters.kernel_us = 55.0;
  counters.dram_read_bytes = 50.35e6;
  counters.dram_write_bytes = 8.72e6;
  counters.l2_hit_rate = 0.25;
  counters.sm_throughput = 0.5;
  counters.tensor_pipe = 0.75;
  r.counters = counters;
  r.counter_replay_passes = 3;
  r.counters_seconds = 0.2;
}

}  // namespace attnsweep::testing
