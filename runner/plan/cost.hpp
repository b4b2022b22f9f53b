#pragma once
// What a case is expected to cost in wall time on a GPU, for balancing work:
// the shard split (shard.hpp), the multi-GPU queue (longest first) and time
// estimates. Integer arithmetic only, so the same config gives the same split
// on every machine and with every compiler (no floating-point contraction or
// rounding differences can move a case to another shard).
//
// The model (docs/scale-out.md): one forward takes
//   work x dtype factor x variant factor / throughput, at least a launch floor,
// where work = batch x heads x seq_len_q x seq_len_kv x head_dim, the dtype
// factor is 1 for bf16 and fp16 and 8 for fp32 (no tensor cores), the variant
// factor is its relative_cost (variant_list.hpp, tenths of sdpa_flash), and the
// throughput is sdpa_flash's at the study's shape on the H200. A case runs
// warm-up, profiled and timed forwards (the stopping rule's least samples or
// least GPU time, capped by measure.max_case_seconds; twice with CUDA graphs)
// plus a fixed overhead (profiler sessions, setup). The float64 reference is
// computed once per shape, dtype and mask, and is counted once per group: by its
// work in the shard split, by its score matrix too in the plan's estimate
// (expected_plan_ns, shard.hpp), which no split depends on.
//
// Passes (issue 23): every pass a backward case runs (warm-up, profiled, each
// timed sample) is a forward and a backward: the backward alone is timed after
// an untimed forward that keeps its graph, and forward_backward times both. A
// backward costs about 2.5 forwards (FlashAttention's FLOP convention; the
// H200 measurements of issue 23 give 2 to 3.3 for flash and cuDNN), so both
// passes cost 1 + 2.5 = 3.5 times the forward's GPU time, launch floor
// included. A forward case costs exactly what it did before the pass axis
// existed, so forward-only splits (cost_lpt_v1) are unchanged; no shard of a
// backward sweep was split before this factor, as `run` refused backward passes.
#include <cstdint>

#include "runner/config/measure_settings.hpp"
#include "runner/plan/case.hpp"

namespace attnsweep {

// Version of the model and of the split built on it, stored with every shard
// run (runs.shard_split); merge refuses shards split by different versions.
inline constexpr const char* kShardSplitVersion = "cost_lpt_v1";

// Expected GPU time of one forward, in nanoseconds.
std::int64_t expected_forward_ns(const Case& c);
// The GPU time of one pass of `pass` in tenths of a forward's: 10 for forward,
// 35 for backward (the untimed forward + the backward) and forward_backward.
int pass_cost_tenths(Pass pass);
// Expected GPU time of one pass of the case (its forward, or its forward and
// backward), in nanoseconds: expected_forward_ns() x pass_cost_tenths() / 10.
std::int64_t expected_pass_ns(const Case& c);
// Expected wall time of one case without its float64 reference, in nanoseconds.
std::int64_t expected_case_ns(const Case& c, const MeasureSettings& measure);
// Expected wall time of the float64 reference of a shape (shared by the cases
// of one shape, dtype and mask that run one after another in one process), as
// the shard split counts it: by work alone (cost_lpt_v1; see
// expected_reference_check_ns for what the check costs).
std::int64_t expected_reference_ns(const Shape& shape);

// The float64 check of a case on a device, by its score matrix (issue 55, item
// 11): batch x heads x seq_len_q x seq_len_kv doubles, each passing through the
// scale, mask, softmax and their temporaries, which dominate the two matmuls at
// every head_dim up to 256 (measured: on a 2-core CPU 50-75 ns per score at
// head_dim 1 to 256 alike, under load; 12 ns for 1x1x32768x1 on the issue's
// machine; on the H200 37 ps per score for 1x64/8x65536x128, 31 ps for
// 2x64/8x65536x64, proofs/long-context/h200-long-context.md). A backward's check is its
// forward's and the gradients' by autograd: pass_cost_tenths() forwards, as the
// cost model counts passes (the H200's 64k backward checks took 3.5 forward ones).
inline constexpr std::int64_t kReferenceCpuScorePs = 10000;  // 10 ns: the machine, rounded down
inline constexpr std::int64_t kReferenceGpuScorePs = 40;     // the H200's 31-37 ps, rounded up
std::int64_t expected_reference_check_ns(const Shape& shape, Pass pass, bool cuda);
// A float64 check expected to take longer than this on its device is not
// computed: 60 x measure.max_case_seconds (10 minutes at the default 10 s; 3
// minutes for the H200 long-context sweeps' 3 s, whose longest check took 58 s).
inline constexpr int kReferenceLimitCaseSeconds = 60;
std::int64_t reference_limit_ns(const MeasureSettings& measure);

}  // namespace attnsweep
