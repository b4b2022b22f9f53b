#include "runner/compare/time_verdict.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "runner/common/text.hpp"
#include "runner/compare/mann_whitney.hpp"
#include "runner/compare/value_text.hpp"
#include "runner/measure/statistics.hpp"

namespace attnsweep::compare {
namespace {

double quantile_of(std::vector<double> values, double fraction) {
  std::sort(values.begin(), values.end());
  return percentile_sorted(values, fraction);
}

double median_of(std::vector<double> values) { return quantile_of(std::move(values), 0.5); }

// "power-capped 85% vs 5% of samples (candidate vs baseline)" when the shares are far apart.
std::string cap_mark(const char* what, const std::optional<double>& baseline, const std::optional<double>& candidate,
                     double limit) {
  if (!baseline || !candidate || std::fabs(*candidate - *baseline) <= limit) return "";
  return std::string(what) + " " + percent(*candidate) + " vs " + percent(*baseline) +
         " of samples (candidate vs baseline)";
}

// AMBIGUOUS because the median moved but the quantile did not move with it.
std::string changed_mix_reason(const TimeComparison& time, const CompareSettings& settings) {
  const std::string q = "p" + std::to_string(static_cast<int>(std::lround(settings.shift_quantile * 100)));
  // "only" when the quantile stayed within the threshold; one that moved beyond it
  // the other way is said so ("only -48%" would read as a small move).
  const bool other_way = time.quantile_ratio && std::fabs(*time.quantile_ratio - 1) >= settings.threshold;
  return "the median moved " + signed_percent(*time.ratio) + " but " + q + (other_way ? " the other way, " : " only ") +
         (time.quantile_ratio ? signed_percent(*time.quantile_ratio) : std::string("-")) +
         ": the mix of fast and slow samples changed, not the whole distribution";
}

}  // namespace

const char* to_string(TimeVerdict verdict) {
  switch (verdict) {
    case TimeVerdict::same: return "SAME";
    case TimeVerdict::faster: return "FASTER";
    case TimeVerdict::slower: return "SLOWER";
    case TimeVerdict::ambiguous: return "AMBIGUOUS";
    case TimeVerdict::not_timed: return "NOT_TIMED";
    case TimeVerdict::suspect: return "SUSPECT";
  }
  return "?";
}

const std::vector<TimeVerdict>& time_verdicts() {
  static const std::vector<TimeVerdict> all = {TimeVerdict::same, TimeVerdict::faster, TimeVerdict::slower,
                                               TimeVerdict::ambiguous, TimeVerdict::not_timed, TimeVerdict::suspect};
  return all;
}

std::vector<double> kept_eager_times_us(const std::vector<TimingSample>& samples, DeviceKind device) {
  std::vector<double> times;
  for (const TimingSample& sample : samples) {
    if (sample.mode != SampleMode::eager || sample.throttled || sample.block_timed_out) continue;
    const std::optional<double>& time = device == DeviceKind::cuda ? sample.gpu_time_us : sample.cpu_time_us;
    if (time && std::isfinite(*time)) times.push_back(*time);
  }
  return times;
}

TimeComparison judge_times(const std::vector<double>& before, const std::vector<double>& after, TimeComparison time,
                           const CompareSettings& settings) {
  time.baseline_samples = before.size();
  time.candidate_samples = after.size();
  if (!before.empty()) time.baseline_median_us = median_of(before);
  if (!after.empty()) time.candidate_median_us = median_of(after);
  if (time.baseline_median_us && time.candidate_median_us && *time.baseline_median_us > 0) {
    time.ratio = *time.candidate_median_us / *time.baseline_median_us;
  }
  if (before.size() < settings.min_kept_samples || after.size() < settings.min_kept_samples) {
    time.verdict = TimeVerdict::ambiguous;
    time.reason = "fewer than " + std::to_string(settings.min_kept_samples) + " kept samples (" +
                  std::to_string(before.size()) + " vs " + std::to_string(after.size()) + ")";
    return time;
  }
  const MannWhitneyResult test = mann_whitney_u(after, before);
  time.p_value = test.p_value;
  if (!time.ratio) {
    time.verdict = TimeVerdict::ambiguous;
    time.reason = "a median of zero";
    return time;
  }
  if (std::fabs(*time.ratio - 1) < settings.threshold ||
      std::fabs(*time.candidate_median_us - *time.baseline_median_us) < settings.min_change_us) {
    time.verdict = TimeVerdict::same;
    return time;
  }
  if (test.p_value >= settings.alpha) {
    time.verdict = TimeVerdict::ambiguous;
    time.reason = signed_percent(*time.ratio) + " but not significant (" + p_text(test.p_value) + " >= " +
                  scientific(settings.alpha) + ")";
    return time;
  }
  const double quantile_before = quantile_of(before, settings.shift_quantile);
  if (quantile_before > 0) time.quantile_ratio = quantile_of(after, settings.shift_quantile) / quantile_before;
  const bool quantile_moved = time.quantile_ratio && std::fabs(*time.quantile_ratio - 1) >= settings.threshold &&
                              (*time.quantile_ratio > 1) == (*time.ratio > 1);
  if (!quantile_moved) {
    time.verdict = TimeVerdict::ambiguous;
    time.reason = changed_mix_reason(time, settings);
    return time;
  }
  time.verdict = *time.ratio > 1 ? TimeVerdict::slower : TimeVerdict::faster;
  std::string mark = cap_mark("power-capped", time.baseline_power_cap_share, time.candidate_power_cap_share,
                              settings.cap_share_difference);
  const std::string thermal = cap_mark("thermally slowed", time.baseline_thermal_cap_share,
                                       time.candidate_thermal_cap_share, settings.cap_share_difference);
  if (!thermal.empty()) mark += (mark.empty() ? "" : ", ") + thermal;
  time.cap_mark = mark;
  return time;
}

TimeComparison compare_times(const storage::CaseRow& baseline, const std::vector<double>& baseline_kept_us,
                             const storage::CaseRow& candidate, const std::vector<double>& candidate_kept_us,
                             const CompareSettings& settings) {
  TimeComparison time;
  time.baseline_power_cap_share = baseline.power_cap_share;
  time.candidate_power_cap_share = candidate.power_cap_share;
  time.baseline_thermal_cap_share = baseline.thermal_cap_share;
  time.candidate_thermal_cap_share = candidate.thermal_cap_share;
  if (baseline.status != CaseStatus::ok || candidate.status != CaseStatus::ok) {
    time.reason = std::string("status ") + to_string(baseline.status) + " -> " + to_string(candidate.status);
    return time;
  }
  return judge_times(baseline_kept_us, candidate_kept_us, std::move(time), settings);
}

std::string samples_text(const std::optional<double>& median_us, std::size_t count) {
  return (median_us ? text::fixed(*median_us, 1) + " us" : std::string("-")) + " (n=" + std::to_string(count) + ")";
}

std::optional<Finding> time_finding(const TimeComparison& time) {
  if (time.verdict == TimeVerdict::same || time.verdict == TimeVerdict::not_timed) return std::nullopt;
  Finding finding{Check::time, Severity::info, "time", samples_text(time.baseline_median_us, time.baseline_samples),
                  samples_text(time.candidate_median_us, time.candidate_samples), ""};
  std::string detail = to_string(time.verdict);
  if (time.verdict == TimeVerdict::ambiguous) {
    detail += ": " + time.reason;
  } else if (time.verdict == TimeVerdict::suspect) {
    detail += ", time not judged: " + time.reason;
  } else {
    detail += " " + signed_percent(*time.ratio) + ", " + p_text(*time.p_value);
    if (time.marked()) {
      detail += ", " + time.cap_mark + ": not counted";
    } else {
      finding.severity = time.verdict == TimeVerdict::slower ? Severity::regression : Severity::improvement;
    }
  }
  finding.detail = detail;
  return finding;
}

}  // namespace attnsweep::compare
