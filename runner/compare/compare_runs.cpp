#include "runner/compare/compare_runs.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <set>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>

#include "runner/common/errors.hpp"
#include "runner/common/numerics.hpp"
#include "runner/common/temp_folder.hpp"
#include "runner/common/text.hpp"
#include "runner/compare/mann_whitney.hpp"
#include "runner/measure/statistics.hpp"
#include "storage/query.hpp"
#include "storage/store.hpp"

namespace attnsweep::compare {
namespace {

using storage::CaseRow;
using storage::RunRow;

// ---- values as text -----------------------------------------------------------

// Shortest faithful text of a stored REAL: 700, 0.02, 1.5e-05.
std::string number_text(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.15g", value);
  return buffer;
}

std::string scientific(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1e", value);
  return buffer;
}

std::string percent(double share, int digits = 0) { return text::fixed(100 * share, digits) + "%"; }

std::string signed_percent(double ratio) {
  const double change = 100 * (ratio - 1);
  return (change >= 0 ? "+" : "") + text::fixed(change, 1) + "%";
}

std::string p_text(double p) {
  if (p < 1e-4) return "p = " + scientific(p);
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "p = %.4f", p);
  return buffer;
}

std::string as_text(const std::string& value) { return value; }
std::string as_text(const std::optional<double>& value) { return value ? number_text(*value) : ""; }
std::string as_text(const std::optional<int>& value) { return value ? std::to_string(*value) : ""; }
std::string as_text(const storage::QueryValue& value) {
  if (std::holds_alternative<std::int64_t>(value)) return std::to_string(std::get<std::int64_t>(value));
  if (std::holds_alternative<double>(value)) return number_text(std::get<double>(value));
  if (std::holds_alternative<std::string>(value)) return std::get<std::string>(value);
  return "";
}

// ---- the run-level facts ------------------------------------------------------

// A fact of RunRow, by member.
struct RunFact {
  const char* name;
  std::string (*read)(const RunRow&);
  bool breaks_timing = false;
};

// A member of RunRow by the name of its column, written once.
#define ATTNSWEEP_RUN_FACT(member, breaks_timing) \
  RunFact { #member, [](const RunRow& run) { return as_text(run.member); }, breaks_timing }

// Every fact of a run that can explain a difference of results, in the order
// they are reported: the machine and software first, then how it measured.
const std::vector<RunFact>& run_facts() {
  static const std::vector<RunFact> facts = {
      {"device", [](const RunRow& run) { return run.device.to_string(); }, false},
      ATTNSWEEP_RUN_FACT(device_name, false),
      ATTNSWEEP_RUN_FACT(driver_version, false),
      ATTNSWEEP_RUN_FACT(cuda_version, false),
      ATTNSWEEP_RUN_FACT(cudnn_version, false),
      ATTNSWEEP_RUN_FACT(torch_version, false),
      ATTNSWEEP_RUN_FACT(attnsweep_version, false),
      ATTNSWEEP_RUN_FACT(git_sha, false),
      ATTNSWEEP_RUN_FACT(container_image, false),
      ATTNSWEEP_RUN_FACT(hostname, false),
      ATTNSWEEP_RUN_FACT(timing_protocol, true),
      ATTNSWEEP_RUN_FACT(measure_regime, true),
      ATTNSWEEP_RUN_FACT(flop_convention, false),
      ATTNSWEEP_RUN_FACT(config_sha256, false),
      ATTNSWEEP_RUN_FACT(power_limit_w, false),
      ATTNSWEEP_RUN_FACT(sm_clock_start_mhz, false),
      ATTNSWEEP_RUN_FACT(mem_clock_start_mhz, false),
      ATTNSWEEP_RUN_FACT(temperature_start_c, false),
      {"seed", [](const RunRow& run) { return std::to_string(run.seed); }, false},
      {"isolate", [](const RunRow& run) { return std::string(run.isolate ? "1" : "0"); }, false},
      {"case_order", [](const RunRow& run) { return std::string(to_string(run.case_order)); }, false},
      ATTNSWEEP_RUN_FACT(gpus, false),
  };
  return facts;
}

#undef ATTNSWEEP_RUN_FACT

// Columns of `runs` that RunRow does not hold: the protocol settings, read by
// name with a read-only query.
const std::vector<std::string>& protocol_columns() {
  static const std::vector<std::string> columns = {
      "l2_flush",   "cuda_graph",        "hide_launch_latency", "throttle_fraction", "min_gpu_seconds",
      "warmup",     "profiled_forwards", "min_samples",         "max_samples",       "target_rel_stdev",
      "max_case_seconds", "burst_cooldown_max_ms", "clock_event_reasons_start"};
  return columns;
}

std::map<std::string, std::string> protocol_settings(const std::string& path, std::int64_t run_id) {
  std::map<std::string, std::string> settings;
  std::vector<std::string> names;
  storage::run_query(
      path, "SELECT * FROM runs WHERE run_id = " + std::to_string(run_id),
      [&](const std::vector<std::string>& columns) { names = columns; },
      [&](const std::vector<storage::QueryValue>& row) {
        for (std::size_t i = 0; i < row.size() && i < names.size(); ++i) settings[names[i]] = as_text(row[i]);
      });
  return settings;
}

std::vector<EnvironmentDifference> environment_differences(const ComparedRun& baseline, const ComparedRun& candidate) {
  std::vector<EnvironmentDifference> differences;
  const auto add = [&](const std::string& fact, const std::string& a, const std::string& b, bool breaks_timing) {
    if (a != b) differences.push_back({fact, a, b, breaks_timing});
  };
  for (const RunFact& fact : run_facts()) {
    add(fact.name, fact.read(baseline.run), fact.read(candidate.run), fact.breaks_timing);
  }
  const auto base_settings = protocol_settings(baseline.path, baseline.run.run_id);
  const auto cand_settings = protocol_settings(candidate.path, candidate.run.run_id);
  const auto setting = [](const std::map<std::string, std::string>& settings, const std::string& name) {
    const auto found = settings.find(name);
    return found == settings.end() ? std::string() : found->second;
  };
  for (const std::string& column : protocol_columns()) {
    add(column, setting(base_settings, column), setting(cand_settings, column), false);
  }
  // env_vars key by key: a variable set on one side only shows as "(unset)" on
  // the other. A run from before schema 7 has no env_vars at all (NULL): nothing
  // is known about its variables, which is one difference, not "(unset)" each.
  if (baseline.run.env_vars.empty() != candidate.run.env_vars.empty()) {
    const auto shown = [](const std::string& text) { return text.empty() ? std::string("(not recorded)") : text; };
    differences.push_back({"env_vars", shown(baseline.run.env_vars), shown(candidate.run.env_vars), false});
    return differences;
  }
  const auto base_variables = storage::env_vars_of(baseline.run.env_vars);
  const auto cand_variables = storage::env_vars_of(candidate.run.env_vars);
  std::set<std::string> names;
  for (const auto& entry : base_variables) names.insert(entry.first);
  for (const auto& entry : cand_variables) names.insert(entry.first);
  for (const std::string& name : names) {
    const auto a = base_variables.find(name), b = cand_variables.find(name);
    const std::string a_text = a == base_variables.end() ? "" : a->second;
    const std::string b_text = b == cand_variables.end() ? "" : b->second;
    const bool both_set = a != base_variables.end() && b != cand_variables.end();
    if (a_text != b_text || !both_set) {
      differences.push_back({name.empty() ? "env_vars" : "env_vars." + name,
                             a == base_variables.end() ? "(unset)" : a_text,
                             b == cand_variables.end() ? "(unset)" : b_text, false});
    }
  }
  return differences;
}

// ---- one case -----------------------------------------------------------------

std::vector<double> kept_times(const storage::RunReader& reader, const CaseRow& row) {
  return kept_eager_times_us(reader.samples(row.case_id), row.device.kind());
}

double quantile_of(std::vector<double> values, double fraction) {
  std::sort(values.begin(), values.end());
  return percentile_sorted(values, fraction);
}

double median_of(std::vector<double> values) { return quantile_of(std::move(values), 0.5); }

std::string samples_text(const std::optional<double>& median, std::size_t count) {
  return (median ? text::fixed(*median, 1) + " us" : std::string("-")) + " (n=" + std::to_string(count) + ")";
}

// "power-capped 85% vs 5% of samples (candidate vs baseline)" when the shares are far apart.
std::string cap_mark(const char* what, const std::optional<double>& baseline, const std::optional<double>& candidate,
                     double limit) {
  if (!baseline || !candidate || std::fabs(*candidate - *baseline) <= limit) return "";
  return std::string(what) + " " + percent(*candidate) + " vs " + percent(*baseline) +
         " of samples (candidate vs baseline)";
}

}  // namespace

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
    const std::string q = "p" + std::to_string(static_cast<int>(std::lround(settings.shift_quantile * 100)));
    // "only" when the quantile stayed within the threshold; one that moved beyond it
    // the other way is said so ("only -48%" would read as a small move).
    const bool other_way = time.quantile_ratio && std::fabs(*time.quantile_ratio - 1) >= settings.threshold;
    time.reason = "the median moved " + signed_percent(*time.ratio) + " but " + q +
                  (other_way ? " the other way, " : " only ") +
                  (time.quantile_ratio ? signed_percent(*time.quantile_ratio) : std::string("-")) +
                  ": the mix of fast and slow samples changed, not the whole distribution";
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

namespace {

TimeComparison compare_times(const storage::RunReader& baseline_reader, const CaseRow& baseline,
                             const storage::RunReader& candidate_reader, const CaseRow& candidate,
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
  return judge_times(kept_times(baseline_reader, baseline), kept_times(candidate_reader, candidate), std::move(time),
                     settings);
}

void check_status(const CaseRow& baseline, const CaseRow& candidate, std::vector<Finding>& findings) {
  if (baseline.status == candidate.status) return;
  Finding finding{Check::status, Severity::info, "status", to_string(baseline.status), to_string(candidate.status), ""};
  const std::string why = candidate.error_message.empty() ? "" : ": " + text::one_line(candidate.error_message);
  if (baseline.status == CaseStatus::ok) {
    finding.severity = Severity::regression;
    finding.detail = std::string("ran in the baseline, ") + to_string(candidate.status) + " now" + why;
  } else if (candidate.status == CaseStatus::ok) {
    finding.severity = Severity::improvement;
    finding.detail = std::string("runs now, was ") + to_string(baseline.status);
  } else {
    finding.detail = std::string("still does not run") + why;
  }
  findings.push_back(std::move(finding));
}

void check_counts(const CaseRow& baseline, const CaseRow& candidate, std::vector<Finding>& findings) {
  const std::vector<std::pair<const char*, std::optional<int> CaseRow::*>> counts = {
      {"kernels_per_forward", &CaseRow::kernels_per_forward},
      {"memcpy_per_forward", &CaseRow::memcpy_per_forward},
      {"memset_per_forward", &CaseRow::memset_per_forward}};
  for (const auto& [name, member] : counts) {
    const std::optional<int>& a = baseline.*member;
    const std::optional<int>& b = candidate.*member;
    if (a == b) continue;
    if (a && b) {
      std::string detail = "launches per forward changed by " + std::string(*b > *a ? "+" : "") + std::to_string(*b - *a);
      if (baseline.counts_consistent == false || candidate.counts_consistent == false) {
        detail += " (counts never agreed between profiled forwards on one side)";
      }
      findings.push_back({Check::counts, Severity::regression, name, std::to_string(*a), std::to_string(*b), detail});
    } else {
      findings.push_back({Check::counts, Severity::info, name, as_text(a), as_text(b),
                          std::string("recorded on one side only")});
    }
  }
}

// The forward's backend and, for backward passes, the backward's (issue 23).
void check_backend(const CaseRow& baseline, const CaseRow& candidate, std::vector<Finding>& findings) {
  const std::pair<const char*, std::string CaseRow::*> backends[] = {
      {"sdpa_backend", &CaseRow::sdpa_backend}, {"sdpa_backend_backward", &CaseRow::sdpa_backend_backward}};
  for (const auto& [name, member] : backends) {
    const std::string& a = baseline.*member;
    const std::string& b = candidate.*member;
    if (a == b) continue;
    const bool both = !a.empty() && !b.empty();
    findings.push_back({Check::backend, both ? Severity::regression : Severity::info, name, a, b,
                        both ? "another backend ran (sdpa_auto's choice, or a fallback)" : "recorded on one side only"});
  }
}

// One error of a case (the output's rel_error, or a backward pass's dq, dk or dv
// error) against its dtype's tolerance.
void check_error(const char* field, const std::optional<double>& a, const std::optional<double>& b,
                 const CompareSettings& settings, Dtype dtype, std::vector<Finding>& findings) {
  const double tolerance = settings.tolerance(dtype);
  const std::string limit = std::string(to_string(dtype)) + " tolerance " + scientific(tolerance);
  if (a && !b) {
    findings.push_back({Check::numerics, Severity::info, field, scientific(*a), "",
                        std::string("no ") + field + " now: not finite, or the accuracy check turned off"});
    return;
  }
  if (!a || !b) return;
  if (*b > tolerance && (*a <= tolerance || *b > settings.numerics_worse_factor * *a)) {
    const std::string detail = *a <= tolerance ? "beyond the " + limit
                                               : "beyond the " + limit + " and more than " +
                                                     number_text(settings.numerics_worse_factor) + "x the baseline's";
    findings.push_back({Check::numerics, Severity::regression, field, scientific(*a), scientific(*b), detail});
  } else if (*a > tolerance && *b <= tolerance) {
    findings.push_back({Check::numerics, Severity::improvement, field, scientific(*a), scientific(*b),
                        "within the " + limit + " now"});
  }
}

void check_numerics(const CaseRow& baseline, const CaseRow& candidate, const CompareSettings& settings,
                    std::vector<Finding>& findings) {
  const bool backward = baseline.identity.pass != Pass::forward;
  const std::optional<double>& a = baseline.rel_error;
  // A finite output (or gradient) turning NaN or Inf is a regression whatever the time says.
  const bool nonfinite_now = candidate.numerics == to_string(NumericsVerdict::nonfinite);
  const bool finite_before = baseline.numerics == to_string(NumericsVerdict::ok) ||
                             baseline.numerics == to_string(NumericsVerdict::beyond_bound) ||
                             (!backward && a.has_value());
  if (nonfinite_now && finite_before) {
    findings.push_back({Check::numerics, Severity::regression, backward ? "output or gradient" : "output",
                        a ? "rel_error " + scientific(*a) : "finite", "NaN or Inf",
                        backward ? "the output or a gradient is not finite now" : "the output is not finite now"});
    return;
  }
  const Dtype dtype = baseline.identity.dtype;
  check_error("rel_error", a, candidate.rel_error, settings, dtype, findings);
  check_error("grad_rel_error_q", baseline.grad_rel_error_q, candidate.grad_rel_error_q, settings, dtype, findings);
  check_error("grad_rel_error_k", baseline.grad_rel_error_k, candidate.grad_rel_error_k, settings, dtype, findings);
  check_error("grad_rel_error_v", baseline.grad_rel_error_v, candidate.grad_rel_error_v, settings, dtype, findings);
}

void add_time_finding(const TimeComparison& time, std::vector<Finding>& findings) {
  if (time.verdict == TimeVerdict::same || time.verdict == TimeVerdict::not_timed) return;
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
  findings.push_back(std::move(finding));
}

EnergyComparison compare_energy(const CaseRow& baseline, const CaseRow& candidate) {
  EnergyComparison energy{baseline.energy_j, candidate.energy_j, baseline.energy_power_w, candidate.energy_power_w,
                          std::nullopt};
  if (energy.baseline_j && energy.candidate_j && *energy.baseline_j > 0) {
    energy.ratio = *energy.candidate_j / *energy.baseline_j;
  }
  return energy;
}

// Energy per pass further apart than settings.energy_change: a note, never
// counted (the counter is coarse; docs/compare.md). None where another process
// computed on the GPU on either side: the counter is the whole GPU's.
void add_energy_finding(const CaseRow& baseline, const CaseRow& candidate, const EnergyComparison& energy,
                        const CompareSettings& settings, std::vector<Finding>& findings) {
  if (!energy.ratio || std::fabs(*energy.ratio - 1) <= settings.energy_change) return;
  if (baseline.other_processes.value_or(0) > 0 || candidate.other_processes.value_or(0) > 0) return;
  const auto joules = [](double value) { return text::fixed(value, value < 0.01 ? 5 : value < 1 ? 4 : 3) + " J"; };
  std::string detail = "energy per pass " + signed_percent(*energy.ratio);
  if (energy.baseline_power_w && energy.candidate_power_w) {
    detail += ", average power " + text::fixed(*energy.baseline_power_w, 0) + " -> " +
              text::fixed(*energy.candidate_power_w, 0) + " W";
  }
  detail += " (beyond " + percent(settings.energy_change) + "; informational: NVML's energy counter)";
  findings.push_back(
      {Check::energy, Severity::info, "energy_j", joules(*energy.baseline_j), joules(*energy.candidate_j), detail});
}

// Why the time of a case cannot be judged (CaseComparison::unjudged), or "".
std::string why_unjudged(const CaseRow& baseline, const CaseRow& candidate, const TimeComparison& time) {
  // Only cases with a time on both sides can lack a judgement of it.
  if (baseline.status != CaseStatus::ok || candidate.status != CaseStatus::ok) return "";
  const int before = baseline.other_processes.value_or(0), after = candidate.other_processes.value_or(0);
  if (before > 0 || after > 0) {
    return "shared GPU: " + std::to_string(after) + " vs " + std::to_string(before) +
           " other compute process(es) (candidate vs baseline)";
  }
  if (candidate.numerics == to_string(NumericsVerdict::nonfinite)) return "the candidate's output is not finite";
  if (baseline.numerics == to_string(NumericsVerdict::nonfinite)) return "the baseline's output is not finite";
  if (time.verdict == TimeVerdict::slower && time.marked()) return "SLOWER while " + time.cap_mark;
  return "";
}

// Whether a case changed in a way its kernels can explain: a count or the
// backend changed (both recorded: a regression finding), or its time moved
// beyond doubt (FASTER or SLOWER, counted or marked). An AMBIGUOUS time is left
// out: its kernels are the same ones, and listing them case after case (the
// nightly's changed mixes) would bury the changes that matter.
bool explains_with_kernels(const CaseComparison& c) {
  if (c.key.device_kind != DeviceKind::cuda) return false;
  for (const Finding& finding : c.findings) {
    if ((finding.check == Check::counts || finding.check == Check::backend) && finding.severity == Severity::regression) {
      return true;
    }
  }
  return c.time.verdict == TimeVerdict::faster || c.time.verdict == TimeVerdict::slower;
}

CaseComparison compare_case(const storage::RunReader& baseline_reader, const CaseRow& baseline,
                             const storage::RunReader& candidate_reader, const CaseRow& candidate,
                             const CompareSettings& settings) {
  CaseComparison result;
  result.key = CaseKey::of(baseline);
  result.baseline_case_id = baseline.case_id;
  result.candidate_case_id = candidate.case_id;
  result.baseline_status = baseline.status;
  result.candidate_status = candidate.status;
  check_status(baseline, candidate, result.findings);
  if (baseline.status == CaseStatus::ok && candidate.status == CaseStatus::ok) {
    check_counts(baseline, candidate, result.findings);
    check_backend(baseline, candidate, result.findings);
    check_numerics(baseline, candidate, settings, result.findings);
  }
  result.time = compare_times(baseline_reader, baseline, candidate_reader, candidate, settings);
  result.unjudged = why_unjudged(baseline, candidate, result.time);
  if (!result.unjudged.empty() && !result.time.marked() &&
      (result.time.verdict == TimeVerdict::faster || result.time.verdict == TimeVerdict::slower)) {
    result.time.cap_mark = result.unjudged;  // reported, not counted either way
  }
  // A suspect side takes the time verdict from every mark (a cap-share change
  // comes with power_capped, the most common reason); only a shared GPU and a
  // non-finite output stay unjudged, as they were before labels existed.
  const bool capped_mark_only = result.unjudged.rfind("SLOWER while", 0) == 0;
  if ((result.unjudged.empty() || capped_mark_only) && baseline.status == CaseStatus::ok &&
      candidate.status == CaseStatus::ok && (baseline.suspect() || candidate.suspect())) {
    result.unjudged.clear();
    result.time.cap_mark.clear();
    result.time.verdict = TimeVerdict::suspect;
    result.time.reason = suspect_reason(baseline, candidate);
  }
  // A case that was ok and is suspect now is news in itself (a graph that lost
  // its kernels, a GPU now capped): a note, never counted.
  if (baseline.validity == "ok" && candidate.suspect()) {
    result.findings.push_back({Check::validity, Severity::info, "validity", "ok",
                               "suspect (" + text::join(candidate.validity_codes(), ", ") + ")",
                               candidate.validity_reasons});
  }
  add_time_finding(result.time, result.findings);
  result.energy = compare_energy(baseline, candidate);
  add_energy_finding(baseline, candidate, result.energy, settings, result.findings);
  if (explains_with_kernels(result)) {
    result.kernels = kernel_differences(baseline_reader.kernels(baseline.case_id),
                                        candidate_reader.kernels(candidate.case_id), settings.kernels);
  }
  return result;
}

ComparedRun compared_run(const storage::RunReader& reader, std::int64_t run_id) {
  std::optional<RunRow> run = reader.run(run_id);
  if (!run) throw BadInputError(reader.path() + ": no run " + std::to_string(run_id));
  return {reader.path(), std::move(*run)};
}

std::string runs_listed(const storage::RunReader& reader) {
  // The newest 20: a long-lived database may hold hundreds of runs.
  constexpr std::size_t kListed = 20;
  std::vector<std::string> ids;
  for (const RunRow& run : reader.runs()) ids.push_back(std::to_string(run.run_id));
  if (ids.size() <= kListed) return text::join(ids, ", ");
  return "..., " + text::join(std::vector<std::string>(ids.end() - kListed, ids.end()), ", ");
}

void add_run_warnings(const char* side, const ComparedRun& compared, std::size_t stored, std::vector<std::string>& warnings) {
  const RunRow& run = compared.run;
  if (run.status == RunStatus::done) return;
  warnings.push_back(std::string("the ") + side + " run " + std::to_string(run.run_id) + " is " + to_string(run.status) +
                     ": " + std::to_string(stored) + " of " + std::to_string(run.planned_cases) +
                     " planned cases stored");
}

}  // namespace

// ---- CaseKey, settings, names -------------------------------------------------

CaseKey CaseKey::of(const CaseRow& row) {
  return {row.identity.variant, row.identity.shape,       row.identity.dtype,
          row.identity.mask,    row.device.kind(),        row.identity.pass};
}

std::string CaseKey::label() const {
  Case c;
  c.variant = variant;
  c.shape = shape;
  c.dtype = dtype;
  c.mask = mask;
  c.pass = pass;
  return c.label() + (device_kind == DeviceKind::cuda ? " cuda" : " cpu");
}

namespace {
auto tied(const CaseKey& key) {
  const Shape& s = key.shape;
  return std::make_tuple(std::cref(key.variant), s.batch, s.heads, s.kv_heads, s.seq_len_q, s.seq_len_kv, s.head_dim,
                         std::cref(s.seq_lens_q), std::cref(s.seq_lens_kv), s.page_size, key.dtype, key.mask, key.pass,
                         key.device_kind);
}
}  // namespace

bool CaseKey::operator<(const CaseKey& other) const { return tied(*this) < tied(other); }
bool CaseKey::operator==(const CaseKey& other) const { return tied(*this) == tied(other); }

double CompareSettings::tolerance(Dtype dtype) const {
  switch (dtype) {
    case Dtype::bf16: return bf16_tolerance;
    case Dtype::fp16: return fp16_tolerance;
    case Dtype::fp32: return fp32_tolerance;
  }
  return fp32_tolerance;
}

// Which side is suspect and why, by the reasons' codes: "the candidate is
// suspect (power_capped, not_converged)"; both sides when both are.
std::string suspect_reason(const CaseRow& baseline, const CaseRow& candidate) {
  const auto codes = [](const CaseRow& row) { return text::join(row.validity_codes(), ", "); };
  std::vector<std::string> sides;
  if (candidate.suspect()) sides.push_back("the candidate is suspect (" + codes(candidate) + ")");
  if (baseline.suspect()) sides.push_back("the baseline is suspect (" + codes(baseline) + ")");
  return text::join(sides, ", ");
}

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

const char* to_string(Check check) {
  switch (check) {
    case Check::status: return "status";
    case Check::counts: return "counts";
    case Check::backend: return "backend";
    case Check::numerics: return "numerics";
    case Check::time: return "time";
    case Check::energy: return "energy";
    case Check::validity: return "validity";
  }
  return "?";
}

const std::vector<Check>& checks() {
  static const std::vector<Check> all = {Check::status, Check::counts, Check::backend, Check::numerics, Check::time,
                                         Check::energy, Check::validity};
  return all;
}

const char* to_string(Severity severity) {
  switch (severity) {
    case Severity::regression: return "regression";
    case Severity::improvement: return "improvement";
    case Severity::info: return "info";
  }
  return "?";
}

bool CaseComparison::has(Severity severity) const {
  return std::any_of(findings.begin(), findings.end(), [&](const Finding& f) { return f.severity == severity; });
}

namespace {
int count_findings(const std::vector<CaseComparison>& cases, Severity severity) {
  int count = 0;
  for (const CaseComparison& c : cases) {
    for (const Finding& finding : c.findings) count += finding.severity == severity ? 1 : 0;
  }
  return count;
}
}  // namespace

int Comparison::regressions() const { return count_findings(cases, Severity::regression); }
int Comparison::improvements() const { return count_findings(cases, Severity::improvement); }
int Comparison::notes() const { return count_findings(cases, Severity::info); }

int Comparison::same_cases() const {
  return static_cast<int>(std::count_if(cases.begin(), cases.end(), [](const CaseComparison& c) { return c.same(); }));
}

int Comparison::marked_cases() const {
  return static_cast<int>(
      std::count_if(cases.begin(), cases.end(), [](const CaseComparison& c) { return c.time.marked(); }));
}

int Comparison::unjudged_cases() const {
  return static_cast<int>(
      std::count_if(cases.begin(), cases.end(), [](const CaseComparison& c) { return !c.unjudged.empty(); }));
}

int Comparison::kernel_difference_cases() const {
  return static_cast<int>(std::count_if(cases.begin(), cases.end(), [](const CaseComparison& c) {
    return c.kernels && (!c.kernels->kernels.empty() || !c.kernels->missing.empty());
  }));
}

std::map<TimeVerdict, int> Comparison::verdict_counts() const {
  std::map<TimeVerdict, int> counts;
  for (TimeVerdict verdict : time_verdicts()) counts[verdict] = 0;
  for (const CaseComparison& c : cases) ++counts[c.time.verdict];
  return counts;
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

// ---- the comparison -----------------------------------------------------------

Comparison compare_runs(const storage::RunReader& baseline, std::int64_t baseline_run,
                        const storage::RunReader& candidate, std::int64_t candidate_run,
                        const CompareSettings& settings) {
  Comparison comparison;
  comparison.settings = settings;
  comparison.baseline = compared_run(baseline, baseline_run);
  comparison.candidate = compared_run(candidate, candidate_run);
  comparison.environment = environment_differences(comparison.baseline, comparison.candidate);

  const std::vector<CaseRow> before = baseline.cases(baseline_run);
  const std::vector<CaseRow> after = candidate.cases(candidate_run);

  // Candidate cases by key, each key's in plan order (a key measured twice pairs in order).
  std::map<CaseKey, std::deque<std::size_t>> unmatched;
  for (std::size_t i = 0; i < after.size(); ++i) unmatched[CaseKey::of(after[i])].push_back(i);
  std::vector<bool> matched(after.size(), false);
  for (const CaseRow& row : before) {
    auto found = unmatched.find(CaseKey::of(row));
    if (found == unmatched.end() || found->second.empty()) {
      comparison.only_in_baseline.push_back(CaseKey::of(row));
      continue;
    }
    const std::size_t index = found->second.front();
    found->second.pop_front();
    matched[index] = true;
    comparison.cases.push_back(compare_case(baseline, row, candidate, after[index], settings));
  }
  for (std::size_t i = 0; i < after.size(); ++i) {
    if (!matched[i]) comparison.only_in_candidate.push_back(CaseKey::of(after[i]));
  }

  // What makes the times, or the whole comparison, not like with like: said first and loudly.
  for (const EnvironmentDifference& difference : comparison.environment) {
    if (!difference.breaks_timing) continue;
    comparison.warnings.push_back(difference.fact + " differs ('" + difference.baseline + "' vs '" +
                                  difference.candidate + "'): the times are not like with like");
  }
  if (comparison.baseline.run.device.kind() != comparison.candidate.run.device.kind()) {
    comparison.warnings.push_back("the baseline ran on " + comparison.baseline.run.device.to_string() +
                                  " and the candidate on " + comparison.candidate.run.device.to_string() +
                                  ": cases match only on the same kind of device");
  }
  std::error_code ignored;
  if (baseline_run == candidate_run && std::filesystem::equivalent(baseline.path(), candidate.path(), ignored)) {
    comparison.warnings.push_back("the baseline and the candidate are the same run (" + comparison.baseline.path +
                                  " run " + std::to_string(baseline_run) + "): nothing can differ");
  }
  if (comparison.cases.empty() && !before.empty() && !after.empty()) {
    comparison.warnings.push_back("no case of the baseline is in the candidate: nothing was compared");
  }
  add_run_warnings("baseline", comparison.baseline, before.size(), comparison.warnings);
  add_run_warnings("candidate", comparison.candidate, after.size(), comparison.warnings);
  return comparison;
}

RunArgument parse_run_argument(const std::string& text, const std::string& name) {
  const std::string allowed = "; give DATABASE or DATABASE:RUN (RUN a run id or latest), e.g. results.db:3";
  if (text.empty()) throw BadInputError(name + ": empty" + allowed);
  std::error_code ignored;
  const std::size_t colon = text.rfind(':');
  if (colon == std::string::npos || std::filesystem::exists(text, ignored)) return {text, std::nullopt};
  const std::string path = text.substr(0, colon), run = text.substr(colon + 1);
  if (path.empty()) throw BadInputError(name + ": '" + text + "' names no database before ':'" + allowed);
  if (run == "latest") return {path, std::nullopt};
  const bool digits = !run.empty() && run.size() <= 18 && std::all_of(run.begin(), run.end(), [](char c) {
    return c >= '0' && c <= '9';
  });
  if (!digits || std::stoll(run) <= 0) {
    throw BadInputError(name + ": '" + text + "': '" + run + "' after ':' is not a run id (a positive integer) or latest" +
                        allowed);
  }
  return {path, std::stoll(run)};
}

std::int64_t resolve_run(const storage::RunReader& reader, const RunArgument& argument, const std::string& name) {
  // The file as the user named it (the reader may read a migrated copy of it).
  const std::string& file = argument.path.empty() ? reader.path() : argument.path;
  if (!argument.run_id) {
    const std::optional<RunRow> latest = reader.latest_run();
    if (!latest) throw BadInputError(name + ": " + file + " holds no run yet; give a database with a run");
    return latest->run_id;
  }
  if (!reader.run(*argument.run_id)) {
    throw BadInputError(name + ": " + file + " has no run " + std::to_string(*argument.run_id) +
                        "; its runs: " + runs_listed(reader) + " (leave out :RUN for the latest)");
  }
  return *argument.run_id;
}

// ---- reading a database of an older schema ---------------------------------

namespace {

// The schema version a file claims (PRAGMA user_version), if it can be read as SQLite at all.
std::optional<int> claimed_schema_version(const std::string& path) {
  std::optional<int> version;
  try {
    storage::run_query(
        path, "PRAGMA user_version", [](const std::vector<std::string>&) {},
        [&](const std::vector<storage::QueryValue>& row) {
          if (!row.empty() && std::holds_alternative<std::int64_t>(row[0])) {
            version = static_cast<int>(std::get<std::int64_t>(row[0]));
          }
        });
  } catch (const std::exception&) {
    return std::nullopt;
  }
  return version;
}

// Removes a folder that holds only files (the copy and SQLite's -wal and -shm
// beside it). Not std::filesystem::remove_all: libtorch.so, linked into the
// binary, exports its own build of it, which crashed (runner/jobs/collect.cpp).
void remove_flat_folder(const std::string& folder) {
  std::error_code ignored;
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(folder, ignored)) files.push_back(entry.path());
  for (const auto& file : files) std::filesystem::remove(file, ignored);
  std::filesystem::remove(folder, ignored);
}

}  // namespace

ReadableDatabase::ReadableDatabase(const std::string& path) : path_(path) {
  try {
    reader_.emplace(path);
    return;
  } catch (const BadInputError&) {
    const std::optional<int> version = claimed_schema_version(path);
    if (!version || *version < 1 || *version >= storage::kSchemaVersion) throw;
    // An attnsweep database of an older schema: migrate a copy, never the file.
    std::string folder = (std::filesystem::path(temp_folder()) / "attnsweep-compare-XXXXXX").string();
    if (!mkdtemp(folder.data())) throw;
    copy_folder_ = folder;
    const std::string copy = folder + "/" + std::filesystem::path(path).filename().string();
    try {
      storage::snapshot_database(path, copy);  // a consistent copy, WAL contents included
      // Migrated at the open (Open::existing would wait for a first write).
      { const storage::Store migrated(copy, storage::Store::Open::create_if_absent); }
      reader_.emplace(copy);
    } catch (const std::exception& error) {
      remove_flat_folder(copy_folder_);
      throw BadInputError(path + ": database schema version " + std::to_string(*version) +
                          " (this attnsweep reads " + std::to_string(storage::kSchemaVersion) +
                          "), and a migrated copy could not be made: " + error.what());
    }
    migrated_from_ = *version;
  }
}

std::string without_db_advice(std::string message) {
  for (const std::string advice : {"; choose another --db", " or another --db"}) {
    if (message.size() > advice.size() && message.compare(message.size() - advice.size(), advice.size(), advice) == 0) {
      message.erase(message.size() - advice.size());
    }
  }
  return message;
}

std::unique_ptr<ReadableDatabase> open_readable(const std::string& path, const std::string& name) {
  try {
    return std::make_unique<ReadableDatabase>(path);
  } catch (const BadInputError& error) {
    const std::string message = without_db_advice(error.what());
    throw BadInputError(name.empty() ? message : name + ": " + message);
  }
}

ReadableDatabase::~ReadableDatabase() {
  reader_.reset();  // closed before its files are removed
  if (!copy_folder_.empty()) remove_flat_folder(copy_folder_);
}

}  // namespace attnsweep::compare
