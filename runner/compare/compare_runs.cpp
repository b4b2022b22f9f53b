#include "runner/compare/compare_runs.hpp"

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <utility>

#include "runner/common/numerics.hpp"
#include "runner/compare/case_matching.hpp"

namespace attnsweep::compare {
namespace {

using storage::CaseRow;

// Why the time of a case cannot be judged, or none.
Unjudged why_unjudged(const CaseRow& baseline, const CaseRow& candidate, const TimeComparison& time) {
  // Only cases with a time on both sides can lack a judgement of it.
  if (baseline.status != CaseStatus::ok || candidate.status != CaseStatus::ok) return {};
  const int before = baseline.other_processes.value_or(0), after = candidate.other_processes.value_or(0);
  if (before > 0 || after > 0) {
    return {Unjudged::Why::shared_gpu, "shared GPU: " + std::to_string(after) + " vs " + std::to_string(before) +
                                           " other compute process(es) (candidate vs baseline)"};
  }
  if (candidate.numerics == to_string(NumericsVerdict::nonfinite)) {
    return {Unjudged::Why::nonfinite_output, "the candidate's output is not finite"};
  }
  if (baseline.numerics == to_string(NumericsVerdict::nonfinite)) {
    return {Unjudged::Why::nonfinite_output, "the baseline's output is not finite"};
  }
  if (time.verdict == TimeVerdict::slower && time.marked()) {
    return {Unjudged::Why::capped_slower, "SLOWER while " + time.cap_mark};
  }
  return {};
}

// Compare's time verdict and why it may not be judged. A shared GPU or a
// non-finite output marks a FASTER or SLOWER (reported, not counted either
// way). A suspect side takes the time verdict from every mark (a cap-share
// change comes with power_capped, the most common reason); only a shared GPU
// and a non-finite output stay unjudged, as they were before labels existed.
void judge_time(const ComparedCase& baseline, const ComparedCase& candidate, const CompareSettings& settings,
                CaseComparison& result) {
  result.time = compare_times(baseline.row, baseline.kept_us, candidate.row, candidate.kept_us, settings);
  result.unjudged = why_unjudged(baseline.row, candidate.row, result.time);
  if (!result.unjudged.empty() && !result.time.marked() && result.time.changed()) {
    result.time.cap_mark = result.unjudged.text;
  }
  const bool capped_mark_only = result.unjudged.why == Unjudged::Why::capped_slower;
  if ((result.unjudged.empty() || capped_mark_only) && result.timed_on_both_sides() &&
      (baseline.row.suspect() || candidate.row.suspect())) {
    result.unjudged = {};
    result.time.cap_mark.clear();
    result.time.verdict = TimeVerdict::suspect;
    result.time.reason = suspect_reason(baseline.row, candidate.row);
  }
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
  return c.time.changed();
}

CaseComparison compare_case(const RunCases& baseline_run, const ComparedCase& baseline, const RunCases& candidate_run,
                            const ComparedCase& candidate, const CompareSettings& settings) {
  CaseComparison result;
  result.key = baseline.key;
  const CaseRule* rule = settings.rule_for(baseline.key);
  const CompareSettings own = settings.for_case(baseline.key);
  result.baseline_case_id = baseline.row.case_id;
  result.candidate_case_id = candidate.row.case_id;
  result.baseline_status = baseline.row.status;
  result.candidate_status = candidate.row.status;
  check_status(baseline.row, candidate.row, result.findings);
  if (result.timed_on_both_sides()) {
    check_counts(baseline.row, candidate.row, result.findings);
    check_backend(baseline.row, candidate.row, result.findings);
    check_numerics(baseline.row, candidate.row, own, result.findings);
  }
  judge_time(baseline, candidate, own, result);
  check_validity(baseline.row, candidate.row, result.findings);
  if (std::optional<Finding> time = time_finding(result.time)) result.findings.push_back(std::move(*time));
  result.energy = compare_energy(baseline.row, candidate.row);
  check_energy(baseline.row, candidate.row, result.energy, own, result.findings);
  check_dram_bytes(baseline.row, candidate.row, own, result.findings);
  if (rule && !rule->ignore.empty()) ignore_case(result, rule->ignore);
  if (explains_with_kernels(result)) {
    result.kernels = kernel_differences(baseline_run.reader->kernels(baseline.row.case_id),
                                        candidate_run.reader->kernels(candidate.row.case_id), settings.kernels);
  }
  return result;
}

}  // namespace

void ignore_case(CaseComparison& c, const std::string& reason) {
  c.ignored = reason;
  c.unjudged = {};
  const std::string prefix = "ignored by a nightly rule (" + reason + "): ";
  for (Finding& finding : c.findings) {
    finding.severity = Severity::info;
    if (finding.detail.rfind(prefix, 0) != 0) finding.detail = prefix + finding.detail;
  }
}

namespace {

void add_run_warnings(const char* side, const ComparedRun& compared, std::size_t stored, std::vector<std::string>& warnings) {
  const storage::RunRow& run = compared.run;
  if (run.status == RunStatus::done) return;
  warnings.push_back(std::string("the ") + side + " run " + std::to_string(run.run_id) + " is " + to_string(run.status) +
                     ": " + std::to_string(stored) + " of " + std::to_string(run.planned_cases) +
                     " planned cases stored");
}

// What makes the times, or the whole comparison, not like with like: said first and loudly.
std::vector<std::string> warnings_of(const Comparison& comparison, const RunCases& baseline, const RunCases& candidate) {
  std::vector<std::string> warnings;
  for (const EnvironmentDifference& difference : comparison.environment) {
    if (!difference.breaks_timing) continue;
    warnings.push_back(difference.fact + " differs ('" + difference.baseline + "' vs '" + difference.candidate +
                       "'): the times are not like with like");
  }
  if (comparison.baseline.run.device.kind() != comparison.candidate.run.device.kind()) {
    warnings.push_back("the baseline ran on " + comparison.baseline.run.device.to_string() + " and the candidate on " +
                       comparison.candidate.run.device.to_string() + ": cases match only on the same kind of device");
  }
  std::error_code ignored;
  if (baseline.run.run.run_id == candidate.run.run.run_id &&
      std::filesystem::equivalent(baseline.reader->path(), candidate.reader->path(), ignored)) {
    warnings.push_back("the baseline and the candidate are the same run (" + comparison.baseline.path + " run " +
                       std::to_string(baseline.run.run.run_id) + "): nothing can differ");
  }
  if (comparison.cases.empty() && !baseline.cases.empty() && !candidate.cases.empty()) {
    warnings.push_back("no case of the baseline is in the candidate: nothing was compared");
  }
  add_run_warnings("baseline", comparison.baseline, baseline.cases.size(), warnings);
  add_run_warnings("candidate", comparison.candidate, candidate.cases.size(), warnings);
  return warnings;
}

int count_findings(const std::vector<CaseComparison>& cases, Severity severity) {
  int count = 0;
  for (const CaseComparison& c : cases) {
    for (const Finding& finding : c.findings) count += finding.severity == severity ? 1 : 0;
  }
  return count;
}

}  // namespace

bool CaseComparison::has(Severity severity) const {
  return std::any_of(findings.begin(), findings.end(), [&](const Finding& f) { return f.severity == severity; });
}

bool CaseComparison::has(Check check) const {
  return std::any_of(findings.begin(), findings.end(), [&](const Finding& f) { return f.check == check; });
}

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

bool Comparison::inconclusive() const {
  return !has_regression() && std::any_of(cases.begin(), cases.end(), [](const CaseComparison& c) {
           return c.unjudged.alone_inconclusive();
         });
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

Comparison compare_runs(const RunCases& baseline, const RunCases& candidate, const CompareSettings& settings) {
  Comparison comparison;
  comparison.settings = settings;
  comparison.baseline = baseline.run;
  comparison.candidate = candidate.run;
  comparison.environment = environment_differences(comparison.baseline, comparison.candidate);
  const CaseMatches matches = match_cases(baseline.cases, candidate.cases);
  for (const auto& [b, c] : matches.pairs) {
    comparison.cases.push_back(compare_case(baseline, baseline.cases[b], candidate, candidate.cases[c], settings));
  }
  for (const std::size_t b : matches.only_in_baseline) comparison.only_in_baseline.push_back(baseline.cases[b].key);
  for (const std::size_t c : matches.only_in_candidate) comparison.only_in_candidate.push_back(candidate.cases[c].key);
  comparison.warnings = warnings_of(comparison, baseline, candidate);
  return comparison;
}

Comparison compare_runs(const storage::RunReader& baseline, std::int64_t baseline_run,
                        const storage::RunReader& candidate, std::int64_t candidate_run,
                        const CompareSettings& settings) {
  const RunCases before = read_run_cases(baseline, baseline_run);
  const RunCases after = read_run_cases(candidate, candidate_run);
  Comparison comparison = compare_runs(before, after, settings);
  comparison.baseline_claims = read_claim_lines(baseline, baseline_run);
  comparison.candidate_claims = read_claim_lines(candidate, candidate_run);
  comparison.fastest_changes = choice_changes(read_choices(baseline, baseline_run), read_choices(candidate, candidate_run));
  return comparison;
}

}  // namespace attnsweep::compare
