#pragma once
// The validity label of a timed case (docs/measurement.md, "Validity"): `ok`,
// or `suspect` with every reason found. attnsweep measures each case three
// ways (CUDA-event samples, CUDA-graph replays, the profiler's kernel times)
// and records clocks, caps and other processes beside them; where these
// disagree or the samples were taken in a state that does not stand for the
// case, the number is still stored but labelled, and compare and nightly do
// not judge its time. Pure: reads the result, writes its label.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "runner/config/measure_settings.hpp"
#include "runner/measure/case_result.hpp"
#include "runner/measure/validity_reason.hpp"
#include "runner/plan/case.hpp"

namespace attnsweep {

// The stated bounds (documented in docs/measurement.md; fixed, so that a label
// means the same thing in every database).
namespace validity_bounds {
// Event median against the profiler's kernel time per pass, each way with its
// own allowance (docs/measurement.md, "Validity"): suspect beyond the larger of
// a share of the event median and a floor plus some per kernel or copy of the pass.
struct EventKernelAllowance {
  double median_share;
  double floor_us;
  double per_launch_us;
  constexpr double allowed_us(double event_median_us, int launches) const {
    return std::max(median_share * event_median_us, floor_us + per_launch_us * launches);
  }
};
// Kernels longer than the events (the events missed work, e.g. on another
// stream): 25% of the median, or 5 us.
inline constexpr EventKernelAllowance kKernelsOverEvents{0.25, 5.0, 0.0};
// Events longer than the kernels (idle time inside the interval, or dropped
// kernel records): 25% of the median, or 10 us plus 1 us per kernel or copy.
// On the H200 (torch 2.11; bench.yaml, training.yaml and ten nights of
// nightly_window.yaml, 908 cases) the kernels ran up to 1.12x the events
// (power-capped) and the events up to 8.3 us past the kernels (cuDNN decoding,
// 2 kernels in 17.5 us, its graph replay 16.1 us: gaps on the GPU, not missed work).
inline constexpr EventKernelAllowance kEventsOverKernels{0.25, 10.0, 1.0};
// Events longer than the kernels are not suspect when the CUDA graph's replays
// take at least this share of the event median: the gaps are the GPU's own.
inline constexpr double kGraphConfirmsEventsShare = 0.9;
// A power or thermal cap on more than this share of the kept samples.
inline constexpr double kCapShare = 0.5;
// Level shifts: the kept eager GPU samples, in the order taken, cut into
// consecutive blocks of max(kLevelMinBlock, n / kLevelBlocks) (at least
// kLevelMinBlocksJudged of them, else not judged); suspect when the blocks'
// medians range wider than the largest of kLevelRelative of the median,
// kLevelNoiseSe standard errors of a block median (from the blocks' own
// spread: scattered noise alone stays under it) and kLevelMinUs. On the H200,
// FA3's variable-length prefill sat on levels of 476 to 530 us for 30 to 100
// samples at a time with no NVML sign, and PyTorch's flash decoding stepped
// from 157 to 142 us mid-case (proofs/serving/h200-serving.md): such a median
// depends on where the case stopped.
inline constexpr int kLevelMinBlock = 10;
inline constexpr int kLevelBlocks = 8;
inline constexpr int kLevelMinBlocksJudged = 4;
inline constexpr double kLevelRelative = 0.03;
inline constexpr double kLevelNoiseSe = 6.0;
inline constexpr double kLevelMinUs = 1.0;
}  // namespace validity_bounds

// How the medians of consecutive blocks of the kept eager GPU samples spread
// (validity_bounds, "Level shifts"); empty where too few samples to judge.
struct SampleLevels {
  int block_size = 0;
  int blocks = 0;
  double lowest_us = 0, highest_us = 0;  // the lowest and highest block median
  double median_us = 0;                  // of all the samples judged
  double allowed_us = 0;                 // the widest range that is not suspect
  bool shifted() const { return highest_us - lowest_us > allowed_us; }
};
std::optional<SampleLevels> sample_levels(const std::vector<TimingSample>& samples);

struct ValidityLimits {
  int min_samples = 10;
  double target_rel_stdev = 0.02;
  bool fixed_sample_count = false;  // min_samples >= max_samples: a count was asked for, no rule to converge

  static ValidityLimits from(const MeasureSettings& measure) {
    return {measure.min_samples, measure.target_rel_stdev, measure.min_samples >= measure.max_samples};
  }
};

// Sets result.validity and result.validity_reasons; a case that was not timed
// (any status but ok, or no kept sample) gets neither. The stored text is
// format_reasons(result.validity_reasons) (validity_reason.hpp).
void judge_validity(const Case& c, const ValidityLimits& limits, CaseResult& result);

}  // namespace attnsweep
