#pragma once
// The validity label of a timed case (docs/measurement.md, "Validity"): `ok`,
// or `suspect` with every reason found. attnsweep measures each case three
// ways (CUDA-event samples, CUDA-graph replays, the profiler's kernel times)
// and records clocks, caps and other processes beside them; where these
// disagree or the samples were taken in a state that does not stand for the
// case, the number is still stored but labelled, and compare and nightly do
// not judge its time. Pure: reads the result, writes its label.
#include <string>

#include "runner/config/measure_settings.hpp"
#include "runner/measure/case_result.hpp"
#include "runner/plan/case.hpp"

namespace attnsweep {

// The stated bounds (documented in docs/measurement.md; fixed, so that a label
// means the same thing in every database).
namespace validity_bounds {
// Event median against the profiler's kernel time per pass, each way with its
// own allowance (docs/measurement.md, "Validity"):
// - kernels longer than the events (the events missed work, e.g. on another
//   stream): suspect beyond the larger of 25% of the median and 5 us;
// - events longer than the kernels (idle time inside the interval, or dropped
//   kernel records): suspect beyond the larger of 25% of the median and 10 us
//   plus 1 us per kernel or copy. On the H200 (torch 2.11; bench.yaml,
//   training.yaml and ten nights of nightly_window.yaml, 908 cases) the
//   kernels ran up to 1.12x the events (power-capped) and the events up to
//   8.3 us past the kernels (cuDNN decoding, 2 kernels in 17.5 us, its graph
//   replay 16.1 us: gaps on the GPU, not missed work).
inline constexpr double kEventKernelRelative = 0.25;
inline constexpr double kKernelsOverEventsUs = 5.0;
inline constexpr double kEventsOverKernelsUs = 10.0;
inline constexpr double kEventsOverKernelsPerLaunchUs = 1.0;
// Events longer than the kernels are not suspect when the CUDA graph's replays
// take at least this share of the event median: the gaps are the GPU's own.
inline constexpr double kGraphConfirmsEventsShare = 0.9;
// A power or thermal cap on more than this share of the kept samples.
inline constexpr double kCapShare = 0.5;
}  // namespace validity_bounds

struct ValidityLimits {
  int min_samples = 10;
  double target_rel_stdev = 0.02;
  bool fixed_sample_count = false;  // min_samples >= max_samples: a count was asked for, no rule to converge

  static ValidityLimits from(const MeasureSettings& measure) {
    return {measure.min_samples, measure.target_rel_stdev, measure.min_samples >= measure.max_samples};
  }
};

// Sets result.validity and result.validity_reasons; a case that was not timed
// (any status but ok, or no kept sample) gets neither.
void judge_validity(const Case& c, const ValidityLimits& limits, CaseResult& result);

// The reasons as stored in cases.validity_reasons: "code: detail" joined by "; ".
std::string joined_reasons(const std::vector<std::string>& reasons);

}  // namespace attnsweep
