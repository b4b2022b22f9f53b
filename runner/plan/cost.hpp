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
// computed once per shape, dtype and mask, and is counted once per group.
#include <cstdint>

#include "runner/config/measure_settings.hpp"
#include "runner/plan/case.hpp"

namespace attnsweep {

// Version of the model and of the split built on it, stored with every shard
// run (runs.shard_split); merge refuses shards split by different versions.
inline constexpr const char* kShardSplitVersion = "cost_lpt_v1";

// Expected GPU time of one forward, in nanoseconds.
std::int64_t expected_forward_ns(const Case& c);
// Expected wall time of one case without its float64 reference, in nanoseconds.
std::int64_t expected_case_ns(const Case& c, const MeasureSettings& measure);
// Expected wall time of the float64 reference of a shape (shared by the cases
// of one shape, dtype and mask that run one after another in one process).
std::int64_t expected_reference_ns(const Shape& shape);

}  // namespace attnsweep
