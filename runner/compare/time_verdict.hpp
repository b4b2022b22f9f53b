#pragma once
// The verdict on a case's time (docs/compare.md, "Time verdicts"): SAME under
// the threshold or the microsecond floor, FASTER or SLOWER only when the
// Mann-Whitney test and the 10th percentile agree, marked by a cap-share
// difference. One rule for two runs (compare) and for tonight against the
// window's median night (nightly --history): both call judge_times.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "runner/common/identities.hpp"
#include "runner/compare/compare_settings.hpp"
#include "runner/compare/findings.hpp"
#include "runner/storage/run_reader.hpp"

namespace attnsweep::compare {

// suspect: both timed, but either side's validity label is `suspect`
// (docs/measurement.md, "Validity"): no verdict on its time; reason says why.
enum class TimeVerdict { same, faster, slower, ambiguous, not_timed, suspect };
const char* to_string(TimeVerdict verdict);  // SAME, FASTER, SLOWER, AMBIGUOUS, NOT_TIMED, SUSPECT
const std::vector<TimeVerdict>& time_verdicts();  // in declaration order

struct TimeComparison {
  TimeVerdict verdict = TimeVerdict::not_timed;
  // Kept eager samples: mode eager, not throttled, not block-timed-out; the
  // GPU's CUDA-event times on CUDA, the steady clock on the CPU.
  std::size_t baseline_samples = 0, candidate_samples = 0;
  std::optional<double> baseline_median_us, candidate_median_us;
  std::optional<double> ratio;    // candidate median / baseline median
  std::optional<double> quantile_ratio;  // the same for CompareSettings::shift_quantile (p10)
  std::optional<double> p_value;  // two-sided Mann-Whitney U on the kept samples
  std::string reason;             // why AMBIGUOUS or NOT_TIMED, in words
  // Shares of kept eager samples under an NVML power cap or thermal slowdown (empty: unknown).
  std::optional<double> baseline_power_cap_share, candidate_power_cap_share;
  std::optional<double> baseline_thermal_cap_share, candidate_thermal_cap_share;
  // Non-empty when the shares differ by more than cap_share_difference on a
  // FASTER or SLOWER verdict, e.g. "power-capped 85% vs 5% of samples": the
  // verdict is reported but counts as neither a regression nor an improvement.
  std::string cap_mark;

  bool marked() const { return !cap_mark.empty(); }
  bool changed() const { return verdict == TimeVerdict::faster || verdict == TimeVerdict::slower; }
};

// The kept eager samples of a case (as the comparison uses them), in sample order.
std::vector<double> kept_eager_times_us(const std::vector<TimingSample>& samples, DeviceKind device);

// The time verdict of two sets of kept samples, by compare's rules:
// medians, SAME under the threshold or the floor, Mann-Whitney, the 10th
// percentile moving the same way, cap marks from the shares already set in
// `time`. compare uses it on two cases; nightly --history on tonight and the
// window's median night.
TimeComparison judge_times(const std::vector<double>& before, const std::vector<double>& after, TimeComparison time,
                           const CompareSettings& settings);

// Two cases' times: their cap shares, NOT_TIMED unless both are ok, else judge_times
// of their kept samples.
TimeComparison compare_times(const storage::CaseRow& baseline, const std::vector<double>& baseline_kept_us,
                             const storage::CaseRow& candidate, const std::vector<double>& candidate_kept_us,
                             const CompareSettings& settings);

// "310.2 us (n=517)": one side of a time finding.
std::string samples_text(const std::optional<double>& median_us, std::size_t count);

// The time finding of a verdict ("SLOWER +98.2%, p = 5.0e-115"); none for SAME and NOT_TIMED.
// FASTER and SLOWER count unless marked.
std::optional<Finding> time_finding(const TimeComparison& time);

}  // namespace attnsweep::compare
