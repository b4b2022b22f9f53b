#include "runner/plan/cost.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "runner/variants/variant_names.hpp"

namespace attnsweep {
namespace {

using Wide = unsigned __int128;
constexpr std::int64_t kMaxCost = std::numeric_limits<std::int64_t>::max() / 4;  // sums of many stay in range

// sdpa_flash, bf16, causal, 8x16x1024x64 on the H200: 8.59e9 work units in 96 us.
constexpr std::int64_t kFlashWorkPerNs = 90000;
// The float64 reference: about 4 FLOPs per work unit at about 50 TFLOP/s.
constexpr std::int64_t kReferenceWorkPerNs = 12500;
constexpr std::int64_t kLaunchFloorNs = 20000;         // a forward of a tiny shape: launches and sync
constexpr std::int64_t kSampleOverheadNs = 60000;      // per timed sample: L2 flush, events, synchronization
constexpr std::int64_t kCaseOverheadNs = 150000000;    // per case: profiler sessions, inputs, bookkeeping (bench: 64 cases in 9.2 s)
constexpr int kFp32Factor = 8;
// The energy window's two waits for a step of NVML's energy counter (at most 0.2 s each;
// about half a step period on average, the period being tens of milliseconds).
constexpr std::int64_t kEnergyStepWaitsNs = 100000000;

std::int64_t clamp_cost(Wide value) { return value > static_cast<Wide>(kMaxCost) ? kMaxCost : static_cast<std::int64_t>(value); }

Wide work_of(const Shape& shape) {
  // Each dimension is at most 2^24 (config_loader.cpp): the product fits 128 bits.
  return static_cast<Wide>(shape.batch) * static_cast<Wide>(shape.heads) * static_cast<Wide>(shape.seq_len_q) *
         static_cast<Wide>(shape.seq_len_kv) *
         // the two matmuls' mean head dim: head_dim itself unless the values' differs
         static_cast<Wide>((shape.head_dim + shape.value_dim()) / 2);
}

// Seconds from the config as whole nanoseconds; llround of the same double is
// the same everywhere.
std::int64_t nanoseconds(double seconds) {
  if (!(seconds > 0)) return 0;
  return seconds >= 1e9 ? kMaxCost : static_cast<std::int64_t>(std::llround(seconds * 1e9));
}

}  // namespace

std::int64_t expected_forward_ns(const Case& c) {
  const VariantInfo* info = find_variant_info(c.variant);
  const int variant_factor = info ? info->relative_cost : 10;
  const int dtype_factor = c.dtype == Dtype::fp32 ? kFp32Factor : 1;
  const Wide ns = work_of(c.shape) * static_cast<Wide>(dtype_factor * variant_factor) / (10 * kFlashWorkPerNs);
  return std::max(kLaunchFloorNs, clamp_cost(ns));
}

int pass_cost_tenths(Pass pass) {
  switch (pass) {
    case Pass::forward: return 10;
    case Pass::backward: return 35;          // an untimed forward (1) + the timed backward (2.5)
    case Pass::forward_backward: return 35;  // the forward (1) + the backward (2.5), both timed
  }
  return 10;
}

std::int64_t expected_pass_ns(const Case& c) {
  const std::int64_t forward = expected_forward_ns(c);
  if (c.pass == Pass::forward) return forward;
  return clamp_cost(static_cast<Wide>(forward) * static_cast<Wide>(pass_cost_tenths(c.pass)) / 10);
}

std::int64_t expected_case_ns(const Case& c, const MeasureSettings& measure) {
  // Warm-up, profiled and timed: each runs the whole pass (a forward; or a forward and a backward).
  const std::int64_t one_pass = expected_pass_ns(c);
  const std::int64_t sample = std::min(kMaxCost / 1000000, one_pass + kSampleOverheadNs);
  // The stopping rule: at least min_samples and min_gpu_seconds, at most max_case_seconds.
  const std::int64_t wanted = std::max(clamp_cost(static_cast<Wide>(std::max(measure.min_samples, 1)) * sample),
                                      nanoseconds(measure.min_gpu_seconds));
  std::int64_t timing = std::min(wanted, std::max(nanoseconds(measure.max_case_seconds), sample));
  if (measure.cuda_graph) timing *= 2;
  // The energy window (CUDA only, as the graph replays; counted alike, whatever the device).
  if (measure.energy_window_ms > 0) {
    timing = clamp_cost(static_cast<Wide>(timing) + static_cast<Wide>(nanoseconds(measure.energy_window_ms / 1000)) +
                        static_cast<Wide>(kEnergyStepWaitsNs));
  }
  const Wide forwards = static_cast<Wide>(std::max(0, measure.warmup)) + static_cast<Wide>(std::max(0, measure.profiled_forwards)) + 1;
  return clamp_cost(static_cast<Wide>(kCaseOverheadNs) + static_cast<Wide>(timing) + forwards * static_cast<Wide>(one_pass));
}

std::int64_t expected_reference_ns(const Shape& shape) { return clamp_cost(work_of(shape) / kReferenceWorkPerNs); }
std::int64_t expected_reference_check_ns(const Shape& shape, Pass pass, bool cuda) {
  const Wide scores = static_cast<Wide>(shape.batch) * static_cast<Wide>(shape.heads) *
                      static_cast<Wide>(shape.seq_len_q) * static_cast<Wide>(shape.seq_len_kv);
  const Wide forward_ps = scores * static_cast<Wide>(cuda ? kReferenceGpuScorePs : kReferenceCpuScorePs);
  return clamp_cost(forward_ps * static_cast<Wide>(pass_cost_tenths(pass)) / 10 / 1000);
}

std::int64_t reference_limit_ns(const MeasureSettings& measure) {
  return nanoseconds(measure.max_case_seconds * kReferenceLimitCaseSeconds);
}

}  // namespace attnsweep
