#pragma once
// Two runs of attnsweep side by side (docs/compare.md): the cases matched by
// what they measure (case_matching), each checked for a change of status,
// kernel counts, backend, numerics (case_checks) and time (time_verdict), and
// the run-level facts that differ (environment_differences), assembled into one
// Comparison. Pure data out: rendering is comparison_report.hpp's, exit codes
// the command's. Both databases are only read, through storage::RunReader.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runner/common/identities.hpp"
#include "runner/compare/case_checks.hpp"
#include "runner/compare/case_key.hpp"
#include "runner/compare/backend_choice.hpp"
#include "runner/compare/compare_settings.hpp"
#include "runner/compare/published_claims.hpp"
#include "runner/compare/environment_differences.hpp"
#include "runner/compare/findings.hpp"
#include "runner/compare/kernel_differences.hpp"
#include "runner/compare/run_cases.hpp"
#include "runner/compare/time_verdict.hpp"
#include "runner/storage/run_reader.hpp"
// What every caller of a comparison also needs: naming the runs, opening the files.
#include "runner/storage/readable_database.hpp"
#include "runner/compare/run_argument.hpp"

namespace attnsweep::compare {

// Why a case's time could not be judged. Such cases make the comparison
// inconclusive, never a pass.
struct Unjudged {
  enum class Why {
    none,
    shared_gpu,        // another process computed on the GPU on either side
    nonfinite_output,  // an output that is not finite, on either side
    capped_slower,     // a SLOWER verdict marked by a power- or thermal-cap difference (it may be a regression)
    // nightly's window only (issue 55, item 4): timed on both sides, but no night of the case's
    // window timed it (every one suspect, or none left after an acceptance): no baseline, no verdict.
    no_window,
  };
  Why why = Why::none;
  std::string text;  // in words, for the reports: "shared GPU: 1 vs 0 other compute process(es) (candidate vs baseline)"

  bool empty() const { return why == Why::none; }
  // Whether this case alone makes a comparison inconclusive: a case without a
  // window does not (nightly counts it among the cases not judged, and only
  // under half judged make the night inconclusive, night_trust.hpp).
  bool alone_inconclusive() const { return why != Why::none && why != Why::no_window; }
};

// One case present in both runs.
struct CaseComparison {
  CaseKey key;
  std::int64_t baseline_case_id = 0, candidate_case_id = 0;
  CaseStatus baseline_status = CaseStatus::ok, candidate_status = CaseStatus::ok;
  TimeComparison time;
  EnergyComparison energy;
  std::vector<Finding> findings;  // status, counts, backend, numerics, validity, time, then energy

  // Why it changed, kernel by kernel: set when a count or the backend changed
  // (both recorded) or the time is FASTER or SLOWER (marked or not), on CUDA.
  std::optional<KernelDifferences> kernels;

  Unjudged unjudged;
  // Non-empty: a per-case rule ignores the case (CompareSettings::rules), for this
  // reason; its findings are kept as notes, none counts, its time is not judged.
  std::string ignored;

  bool has(Severity severity) const;
  bool has(Check check) const;  // a finding of that check, of any severity
  // Nothing to report: no finding (its time SAME, or NOT_TIMED on both sides alike).
  bool same() const { return findings.empty(); }
  bool timed_on_both_sides() const {
    return baseline_status == CaseStatus::ok && candidate_status == CaseStatus::ok;
  }
};

struct Comparison {
  ComparedRun baseline, candidate;
  CompareSettings settings;
  std::vector<EnvironmentDifference> environment;  // informational, never a regression
  std::vector<std::string> warnings;               // loud: times not like with like, no case matched, ...
  std::vector<CaseComparison> cases;               // matched: in the baseline's plan order
  std::vector<CaseKey> only_in_baseline, only_in_candidate;
  // Issue 37, read by the reader overload of compare_runs: each run's claims
  // beside its measurement, and the case groups whose fastest variant changed.
  std::vector<ClaimLine> baseline_claims, candidate_claims;
  std::vector<ChoiceChange> fastest_changes;

  int regressions() const;   // findings of severity regression, over all cases
  int improvements() const;  // findings of severity improvement
  int notes() const;         // findings of severity info
  int same_cases() const;    // matched cases with nothing to report
  int marked_cases() const;  // time verdicts marked by a power- or thermal-cap difference
  int unjudged_cases() const;  // cases whose time could not be judged (CaseComparison::unjudged)
  int kernel_difference_cases() const;  // cases with kernel differences to show (a listed kernel or `missing`)
  // No regression, but cases that could not be judged (Unjudged::alone_inconclusive):
  // neither a pass nor a failure.
  bool inconclusive() const;
  std::map<TimeVerdict, int> verdict_counts() const;  // every verdict, zeros included
  bool has_regression() const { return regressions() > 0; }
};

// Compares the `candidate` run against the `baseline` run, both read already
// (run_cases.hpp); kernels of changed cases are read through their readers.
// A per-case rule's ignore (CompareSettings::rules) applied to a compared case:
// every finding becomes a note that says why (none counts), and it is not
// counted among the cases not judged. compare_runs applies it; nightly's window
// again after it replaces the time verdict.
void ignore_case(CaseComparison& c, const std::string& reason);

Comparison compare_runs(const RunCases& baseline, const RunCases& candidate, const CompareSettings& settings = {});

// Reads both runs, then compares them. Throws BadInputError when either run is
// not in its database.
Comparison compare_runs(const storage::RunReader& baseline, std::int64_t baseline_run,
                        const storage::RunReader& candidate, std::int64_t candidate_run,
                        const CompareSettings& settings = {});

}  // namespace attnsweep::compare
