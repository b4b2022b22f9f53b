#pragma once
// Two runs of attnsweep side by side (docs/compare.md): the cases matched by
// what they measure, each checked for a change of status, kernel counts,
// backend, numerics and time, and the run-level facts that differ. Pure data
// out: rendering is comparison_report.hpp's, exit codes the command's. Both
// databases are only read, through storage::RunReader.
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runner/common/identities.hpp"
#include "runner/compare/kernel_differences.hpp"
#include "runner/plan/case.hpp"
#include "storage/run_reader.hpp"

namespace attnsweep::compare {

// What makes two cases of two runs the same measurement: the variant, shape,
// dtype, mask, pass and the kind of device (cpu or cuda; not its index).
struct CaseKey {
  std::string variant;
  Shape shape;
  Dtype dtype = Dtype::bf16;
  Mask mask;
  DeviceKind device_kind = DeviceKind::cpu;
  Pass pass = Pass::forward;

  static CaseKey of(const storage::CaseRow& row);
  std::string label() const;  // "sdpa_flash 8x16x1024x64 bf16 causal cuda"; "... causal backward cuda"
  bool operator<(const CaseKey& other) const;
  bool operator==(const CaseKey& other) const;
};

struct CompareSettings {
  // A change of the median time under this share is SAME (--threshold 5 = 0.05).
  double threshold = 0.05;
  // ...and so is one under this many microseconds (--min-change-us): between
  // processes, kernels under 30 us moved by up to 1.2 us on the H200 with
  // nothing changed (docs/compare.md, "Noise between runs").
  double min_change_us = 2.0;
  // FASTER or SLOWER also needs this quantile of the kept samples to move
  // beyond the threshold in the same direction as the median: the whole
  // distribution shifted, not only the mix of fast and slow samples.
  double shift_quantile = 0.10;
  // Significance level of the two-sided Mann-Whitney U test for FASTER or SLOWER.
  double alpha = 0.001;
  // Fewer kept eager samples than this on either side: AMBIGUOUS.
  std::size_t min_kept_samples = 5;
  // Power- or thermal-cap shares further apart than this mark a time verdict:
  // reported, not counted as a regression or an improvement.
  double cap_share_difference = 0.2;
  // A candidate beyond tolerance whose baseline was beyond it too regresses
  // when its rel_error grew by more than this factor.
  double numerics_worse_factor = 2;
  // rel_error tolerances per dtype (docs/compare.md says why).
  double bf16_tolerance = 1.6e-2, fp16_tolerance = 2e-3, fp32_tolerance = 1e-4;
  // What the kernel-level differences of a changed case list (kernel_differences.hpp).
  KernelDifferenceSettings kernels;
  // Energy per pass (cases.energy_j) further apart than this share is a note,
  // never a regression or an improvement: NVML's energy counter steps every
  // 100 ms on the H200; aligned windows repeat to about 1%, and a window's
  // length and the GPU's state move a figure by more (docs/compare.md).
  double energy_change = 0.10;

  double tolerance(Dtype dtype) const;
};

// The verdict on a case's time.
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
};

// What a finding is about, and whether it counts.
enum class Check { status, counts, backend, numerics, time, energy, validity };
enum class Severity { regression, improvement, info };  // info: reported, never counted
const char* to_string(Check check);        // status, counts, backend, numerics, time, energy, validity
const std::vector<Check>& checks();        // in declaration order
const char* to_string(Severity severity);  // regression, improvement, info

struct Finding {
  Check check = Check::status;
  Severity severity = Severity::info;
  std::string field;                // the column: status, kernels_per_forward, sdpa_backend, rel_error, time
  std::string baseline, candidate;  // the two values as text
  std::string detail;               // one sentence for a reader
};

// The energy per pass of a case in both runs (cases.energy_j; empty where not
// measured), what the JSON output and the energy note are made of.
struct EnergyComparison {
  std::optional<double> baseline_j, candidate_j;              // joules per pass
  std::optional<double> baseline_power_w, candidate_power_w;  // average power in the window
  std::optional<double> ratio;                                // candidate_j / baseline_j, both measured
};

// One case present in both runs.
struct CaseComparison {
  CaseKey key;
  std::int64_t baseline_case_id = 0, candidate_case_id = 0;
  CaseStatus baseline_status = CaseStatus::ok, candidate_status = CaseStatus::ok;
  TimeComparison time;
  EnergyComparison energy;
  std::vector<Finding> findings;  // status, counts, backend, numerics, time, then energy

  // Why it changed, kernel by kernel: set when a count or the backend changed
  // (both recorded) or the time is FASTER or SLOWER (marked or not), on CUDA.
  std::optional<KernelDifferences> kernels;

  // Why this case's time could not be judged, or empty: another process
  // computed on the GPU on either side, an output that is not finite, or a
  // SLOWER verdict marked by a power- or thermal-cap difference (it may be a
  // regression). Such cases make the comparison inconclusive, never a pass.
  std::string unjudged;

  bool has(Severity severity) const;
  // Nothing to report: no finding (its time SAME, or NOT_TIMED on both sides alike).
  bool same() const { return findings.empty(); }
};

// A run-level fact (a runs column, or one key of env_vars) that differs.
struct EnvironmentDifference {
  std::string fact;  // the column name, or env_vars.NAME
  std::string baseline, candidate;  // "" when absent (NULL, or the variable unset)
  // The times of the two runs are not like with like (timing_protocol, measure_regime).
  bool breaks_timing = false;
};

// A run as the comparison names it.
struct ComparedRun {
  std::string path;
  storage::RunRow run;
};

struct Comparison {
  ComparedRun baseline, candidate;
  CompareSettings settings;
  std::vector<EnvironmentDifference> environment;  // informational, never a regression
  std::vector<std::string> warnings;               // loud: times not like with like, no case matched, ...
  std::vector<CaseComparison> cases;               // matched: in the baseline's plan order
  std::vector<CaseKey> only_in_baseline, only_in_candidate;

  int regressions() const;   // findings of severity regression, over all cases
  int improvements() const;  // findings of severity improvement
  int notes() const;         // findings of severity info
  int same_cases() const;    // matched cases with nothing to report
  int marked_cases() const;  // time verdicts marked by a power- or thermal-cap difference
  int unjudged_cases() const;  // cases whose time could not be judged (CaseComparison::unjudged)
  int kernel_difference_cases() const;  // cases with kernel differences to show (a listed kernel or `missing`)
  // No regression, but cases that could not be judged: neither a pass nor a failure.
  bool inconclusive() const { return !has_regression() && unjudged_cases() > 0; }
  std::map<TimeVerdict, int> verdict_counts() const;  // every verdict, zeros included
  bool has_regression() const { return regressions() > 0; }
};

// Compares run `candidate_run` of `candidate` against run `baseline_run` of
// `baseline`. Throws BadInputError when either run is not in its database.
Comparison compare_runs(const storage::RunReader& baseline, std::int64_t baseline_run,
                        const storage::RunReader& candidate, std::int64_t candidate_run,
                        const CompareSettings& settings = {});

// A command-line argument DATABASE[:RUN]: a path, and a run id or "latest".
struct RunArgument {
  std::string path;
  std::optional<std::int64_t> run_id;  // empty: the latest run in the file
};

// Parses `text` as DATABASE[:RUN]; `name` (BASELINE, CANDIDATE) goes into the
// message. A text that names an existing file is a path as it is, colons and
// all. Throws BadInputError for an empty path or a RUN that is not a positive
// integer or "latest".
RunArgument parse_run_argument(const std::string& text, const std::string& name);

// The run `argument` names in `reader` (its run_id, else the latest). Throws
// BadInputError naming `name`, the file (argument.path, else the reader's) and
// its runs when there is none.
std::int64_t resolve_run(const storage::RunReader& reader, const RunArgument& argument, const std::string& name);

// A results database opened for reading: what compare and the nightly read
// through. A file of an older attnsweep schema version is read through a
// migrated copy in a temporary folder, removed with this object; the file
// itself is never changed (migrating it in place would take a run written
// into it). Throws BadInputError as storage::RunReader does otherwise.
class ReadableDatabase {
 public:
  explicit ReadableDatabase(const std::string& path);
  ~ReadableDatabase();
  ReadableDatabase(const ReadableDatabase&) = delete;
  ReadableDatabase& operator=(const ReadableDatabase&) = delete;

  // Reads the copy when one was made: its path() is the copy's.
  const storage::RunReader& reader() const { return *reader_; }
  const std::string& path() const { return path_; }  // the file as given
  std::optional<int> migrated_from() const { return migrated_from_; }  // the file's older schema version

 private:
  std::string path_, copy_folder_;
  std::optional<int> migrated_from_;
  std::optional<storage::RunReader> reader_;
};

// A refusal of the reader without its advice for `run --db` ("; choose another
// --db"), which does not apply to a database that is only read.
std::string without_db_advice(std::string message);

// Opens `path` as a ReadableDatabase. A refusal is BadInputError "NAME: why"
// (just "why" when `name` is empty), without the advice for `run --db`.
std::unique_ptr<ReadableDatabase> open_readable(const std::string& path, const std::string& name);

// The kept eager samples of a case (as the comparison uses them), in sample order.
std::vector<double> kept_eager_times_us(const std::vector<TimingSample>& samples, DeviceKind device);

// Which side of a comparison is suspect, by its reasons' codes: "the candidate
// is suspect (power_capped, not_converged)"; both when both are; "" when neither.
std::string suspect_reason(const storage::CaseRow& baseline, const storage::CaseRow& candidate);

// The time verdict of two sets of kept samples, by compare's rules (docs/compare.md,
// "Time verdicts"): medians, SAME under the threshold or the floor, Mann-Whitney,
// the 10th percentile moving the same way, cap marks from the shares already set
// in `time`. compare uses it on two cases; nightly --history on tonight and the
// window's median night.
TimeComparison judge_times(const std::vector<double>& before, const std::vector<double>& after, TimeComparison time,
                           const CompareSettings& settings);

}  // namespace attnsweep::compare
