#pragma once
// Whether a compared night can be called a pass (issue 38; docs/reproducibility.md,
// "Inconclusive nights"): a night whose environment changed in a fact that moves
// times, or whose time verdicts could mostly not be judged, says nothing about
// speed. Its reasons, environment first, make a night without a regression
// inconclusive (exit 4), and head the summary of one with a regression.
#include <string>
#include <vector>

#include "runner/compare/compare_runs.hpp"

namespace attnsweep::workflows {

// Under this share of the cases timed on both nights judged on time (not
// suspect, not unjudged), the night is inconclusive: most of its times were not
// looked at. Half: a majority of the timed cases must be judged for a pass to
// speak for the sweep (held-out on the H200: an allocator slip left 5 of 28 judged).
inline constexpr double kMinJudgedShare = 0.5;

// A run-level fact whose change moves times, as its column says where it is
// declared (storage::moves_times, run_facts.hpp): the power limit, the GPU's
// maximum SM clock, what compare marks as breaking timing (timing_protocol,
// measure_regime), and in env_vars the allocator (PYTORCH_NO_CUDA_MEMORY_CACHING,
// PYTORCH_CUDA_ALLOC_CONF), TF32 (NVIDIA_TF32_OVERRIDE, TORCH_ALLOW_TF32*) and
// CUDA_LAUNCH_BLOCKING. `fact` as EnvironmentDifference names it.
bool moves_times(const compare::EnvironmentDifference& difference);

struct NightTrust {
  int timed = 0;   // cases timed on both nights
  int judged = 0;  // of those, judged on time
  std::vector<std::string> reasons;  // why the night is no pass; empty: it can be one
};

NightTrust night_trust(const compare::Comparison& comparison);

}  // namespace attnsweep::workflows
