#pragma once
// The small CPU sweeps the scale-out tests split into shards, merge and launch:
// each shard a second or two on the CPU, shape groups that split evenly.
#include <string>

namespace attnsweep::testing {

// 12 cases: 4 shapes x 3 variants, a second or two on the CPU (launch, --shard, --gpus).
inline const char* const kTwelveCaseSweep = R"(name: scale
variants: [naive, sdpa_math, sdpa_flash]
dtypes: [fp32]
shapes: {batch: 1, heads: 2, seq_len: [16, 32, 48, 64], head_dim: 8}
measure: {warmup: 1, profiled_forwards: 1, min_samples: 3, max_samples: 3, cuda_graph: false}
)";

// 6 cases in three groups of one shape each: one group per shard of three (merge).
inline std::string six_case_sweep(const std::string& name) {
  return "name: " + name + R"(
variants: [naive, sdpa_math]
dtypes: [fp32]
shapes: {batch: 1, heads: 2, seq_len: [16, 32, 48], head_dim: 8}
measure: {warmup: 1, profiled_forwards: 1, min_samples: 3, max_samples: 3, cuda_graph: false}
)";
}

// 2 cases under --isolate (ATTNSWEEP_TEST_VARIANTS=1): naive, then test_hang's
// worker hanging until the run is stopped by a signal (publish, collect).
inline const char* const kHangingSweep = R"(name: hang
device: cpu
variants: [naive, test_hang]
dtypes: [fp32]
shapes: {batch: 1, heads: 2, seq_len: 16, head_dim: 8}
measure: {warmup: 1, profiled_forwards: 1, min_samples: 3, max_samples: 3, cuda_graph: false, case_timeout_s: 60}
)";

}  // namespace attnsweep::testing
