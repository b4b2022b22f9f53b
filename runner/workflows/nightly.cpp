#include "runner/workflows/nightly.hpp"

#include <ctime>
#include <map>
#include <exception>
#include <filesystem>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "runner/common/copy_file.hpp"
#include "runner/common/whole_file.hpp"
#include "runner/compare/compare_runs.hpp"
#include "runner/config/config.hpp"
#include "runner/execute/sweep.hpp"
#include "runner/storage/run_reader.hpp"
#include "runner/storage/store.hpp"
#include "runner/storage/write_ahead_log.hpp"
#include "runner/common/text.hpp"
#include "runner/workflows/acceptance.hpp"
#include "runner/workflows/good_nights.hpp"
#include "runner/workflows/night_trust.hpp"
#include "runner/workflows/night_window.hpp"
#include "runner/workflows/nightly_inputs.hpp"
#include "runner/workflows/nightly_summary.hpp"
#include "runner/workflows/scratch_folder.hpp"
#include "runner/workflows/window_verdicts.hpp"

namespace attnsweep::workflows {
namespace {

namespace fs = std::filesystem;

// Folds tonight's write-ahead log back into its database when destroyed
// (runner/storage/write_ahead_log.hpp): declared before the readers of the database, so
// destroyed after them.
class FoldedAtEnd {
 public:
  explicit FoldedAtEnd(std::string path) : path_(std::move(path)) {}
  ~FoldedAtEnd() { storage::fold_write_ahead_log(path_); }
  FoldedAtEnd(const FoldedAtEnd&) = delete;
  FoldedAtEnd& operator=(const FoldedAtEnd&) = delete;

 private:
  std::string path_;
};

// The run tonight is compared with: a pinned run, or the newest good night.
struct Baseline {
  const GoodNight* night = nullptr;  // open and read once
  std::string shown_path;            // the history's name for it, not the scratch copy's
};

execute::SweepOutcome run_tonight(const NightlyRequest& request, const NightlyOutcome& outcome) {
  execute::SweepRequest sweep;
  sweep.config_path = request.config_path;
  sweep.db_path = outcome.db_path;
  sweep.device = request.device;
  // Two nightlies started in one second in one folder: the second is refused, not mixed in.
  sweep.new_database = request.db_path.empty();
  return execute::run_sweep(sweep);
}

// The pinned run, read after the sweep (its run id was fixed before it).
GoodNight read_pinned(const compare::RunArgument& argument) {
  auto database = std::make_unique<storage::ReadableDatabase>(argument.path);
  const std::int64_t run_id = compare::resolve_run(database->reader(), argument, "--baseline");
  compare::RunCases run = compare::read_run_cases(database->reader(), run_id);
  return {argument.path, std::move(database), std::move(run)};
}

// Times against the window of the last good nights, and the alert rule
// (window_verdicts.hpp); `good` newest first.
void judge_times_by_window(const NightlyRequest& request, const compare::RunCases& tonight,
                           const std::vector<GoodNight>& good, compare::Comparison& comparison,
                           NightlySummary& summary, NightlyOutcome& outcome) {
  std::vector<Night> nights{night_of(tonight)};  // alert_for's order: tonight, then the good nights
  for (const GoodNight& night : good) {
    nights.push_back(night_of(night.run));
    if (static_cast<int>(summary.window_nights.size()) < request.window.window) summary.window_nights.push_back(night.file);
  }
  std::vector<const Night*> ordered;
  for (const Night& n : nights) ordered.push_back(&n);
  outcome.window_nights = static_cast<int>(summary.window_nights.size());
  // An accepted change restarts its cases' window at the night it was seen: the
  // nights before it (newest first, so a tail of `good`) no longer count for them.
  const std::vector<Acceptance> acceptances = read_acceptances(request.history_dir, summary.skipped);
  std::map<std::string, int> covered;  // acceptance file -> cases of tonight it restarted
  const auto usable_nights = [&](const compare::CaseKey& key) -> std::size_t {
    const Acceptance* accepted = acceptance_for(acceptances, key);
    if (!accepted) return ordered.size();
    ++covered[accepted->file];
    std::size_t usable = 1;  // tonight
    for (const GoodNight& night : good) {
      if (stamp_in(night.file) < accepted->night) break;
      ++usable;
    }
    return usable;
  };
  outcome.watch = apply_window(comparison, ordered, request.window, request.settings, usable_nights);
  for (const Acceptance& a : acceptances) {
    if (!covered.count(a.file)) continue;
    summary.accepted.push_back(a.file + ": the change of night " + a.night + " accepted for " + text::join(a.cases, ", ") +
                               " by " + a.by + " at " + a.at + " (" + a.reason + "); " + std::to_string(covered[a.file]) +
                               " case(s) judged from that night on");
  }
  outcome.accepted = summary.accepted;
}

// Tonight against its baseline: compare's verdicts, with --history the window's
// times; what the summary and the outcome say of them.
void compare_night(const NightlyRequest& request, const compare::RunCases& tonight, const Baseline& baseline,
                   const std::vector<GoodNight>& good, NightlySummary& summary, NightlyOutcome& outcome) {
  compare::Comparison comparison = compare::compare_runs(baseline.night->run, tonight, request.settings);
  comparison.baseline.path = baseline.shown_path;
  const storage::RunRow& run = baseline.night->run.run.run;
  outcome.baseline = baseline.shown_path + " run " + std::to_string(run.run_id) + " (started " + run.started_at + ")";
  summary.baseline = outcome.baseline;
  summary.baseline_migrated_from = baseline.night->database->migrated_from();
  summary.consecutive = request.window.consecutive;
  if (!good.empty()) judge_times_by_window(request, tonight, good, comparison, summary, outcome);
  for (const compare::CaseComparison& c : comparison.cases) {
    if (c.time.verdict == compare::TimeVerdict::suspect) outcome.suspect.push_back(c.key.label() + ": " + c.time.reason);
    if (!c.unjudged.empty()) outcome.unjudged.push_back(c.key.label() + ": " + c.unjudged.text);
  }
  summary.watch = outcome.watch;
  summary.suspect = outcome.suspect;
  outcome.compared_nothing = comparison.cases.empty();
  outcome.regression = comparison.has_regression();
  const NightTrust trust = night_trust(comparison);
  outcome.trust_reasons = trust.reasons;
  outcome.timed_on_both = trust.timed;
  outcome.judged_on_time = trust.judged;
  outcome.inconclusive = comparison.inconclusive() || (!outcome.regression && !trust.reasons.empty());
  summary.trust_reasons = trust.reasons;
  outcome.comparison = comparison;
  summary.comparison = std::move(comparison);
}

NightlySummary summary_of_tonight(const NightlyRequest& request, const execute::SweepOutcome& night,
                                  const NightlyOutcome& outcome) {
  NightlySummary summary;
  summary.stamp = outcome.stamp;
  summary.config_path = request.config_path;
  summary.db_path = outcome.db_path;
  summary.run_id = night.run_id;
  summary.stored_cases = night.cases.size();
  summary.planned_cases = night.planned_cases;
  summary.status = night.status;
  return summary;
}

// The night's end: unfinished, a first night, or compared with its baseline.
NightlySummary judge_night(const NightlyRequest& request, const execute::SweepOutcome& night,
                           const compare::RunArgument& pinned, const ScratchFolder& scratch, NightlyOutcome& outcome) {
  NightlySummary summary = summary_of_tonight(request, night, outcome);
  std::vector<GoodNight> good;  // with --history: newest first, the first the baseline
  if (request.baseline.empty() && night.status == RunStatus::done) {
    good = good_nights(request.history_dir, scratch.path(), night.device.kind(),
                       request.window.window + request.window.consecutive - 1,
                       stamp_time(outcome.stamp).value_or(std::time(nullptr)), summary.skipped);
  }
  if (night.status != RunStatus::done) {
    summary.end = NightEnd::unfinished;
    outcome.regression = true;
    return summary;
  }
  if (request.baseline.empty() && good.empty()) {
    summary.end = NightEnd::first_night;
    summary.device = night.device.to_string();
    summary.history_dir = request.history_dir;
    // A first night measured beside another process is no baseline either, and not a pass.
    for (const storage::CaseRow& c : night.cases) {
      summary.shared_cases += c.status == CaseStatus::ok && c.other_processes.value_or(0) > 0;
    }
    outcome.inconclusive = summary.shared_cases > 0;
    return summary;
  }
  std::optional<GoodNight> pinned_run;
  if (!request.baseline.empty()) pinned_run = read_pinned(pinned);
  const Baseline baseline = pinned_run ? Baseline{&*pinned_run, pinned.path}
                                       : Baseline{&good.front(), request.history_dir + "/" + good.front().file};
  const storage::RunReader reader(outcome.db_path);
  const compare::RunCases tonight = compare::read_run_cases(reader, night.run_id, night.cases);
  compare_night(request, tonight, baseline, good, summary, outcome);
  return summary;
}

// The summary is optional, the night is not: a summary that cannot be written
// (its disk full) is reported by the caller, and the night still goes into the history.
void write_summary(const NightlyRequest& request, NightlyOutcome& outcome) {
  try {
    // Checked again now: the night took minutes, and a link planted meanwhile must not lead the text over an input.
    refuse_night_output(request, outcome, outcome.summary_path, "--summary");
    write_whole_file(outcome.summary_path, outcome.summary, "--summary");
  } catch (const std::exception& error) {
    outcome.summary_error = error.what();
  }
}

// Whole files into the history folder: a consistent snapshot of the database
// made on local disk (SQLite never runs in the history, which may be a bucket
// mount), copied in whole, then the summary (from its text, written locally
// first: the --summary file may be missing, or a device). Each is written once,
// sequentially, and closed (what a bucket mount uploads), never over an
// existing file (runner/common/copy_file.hpp). A failure here leaves tonight's
// local files as they are and is reported, with the summary, by the caller.
void copy_into_history(const NightlyRequest& request, const ScratchFolder& scratch, NightlyOutcome& outcome) {
  try {
    std::error_code ignored;
    fs::create_directories(request.history_dir, ignored);
    const std::string snapshot = scratch.path() + "/tonight.db";
    storage::snapshot_database(outcome.db_path, snapshot);
    copy_to_new_file(snapshot, outcome.history_db);
    const std::string summary_copy = scratch.path() + "/tonight.md";
    write_whole_file(summary_copy, outcome.summary, "the summary's copy");
    copy_to_new_file(summary_copy, outcome.history_summary);
  } catch (const std::exception& error) {
    outcome.history_error = std::string("--history: ") + error.what() + "; tonight's files are kept at " +
                            outcome.db_path +
                            (outcome.summary_error.empty() ? " and " + outcome.summary_path : std::string());
  }
}

}  // namespace

NightlyOutcome run_nightly(const NightlyRequest& given) {
  // The config's per-case rules (nightly.rules) judge with the command line's settings;
  // a bad config is refused here, before anything runs.
  NightlyRequest request = given;
  request.settings.rules = load_config(request.config_path).nightly_rules;
  NightlyOutcome outcome = name_night_files(request);
  // Everything that would only fail after the sweep is checked before it; the
  // baseline too, so bad input is refused before an expensive sweep.
  check_night_files(request, outcome);
  const compare::RunArgument pinned = check_baseline(request, outcome);
  const execute::SweepOutcome night = run_tonight(request, outcome);
  outcome.run_id = night.run_id;
  outcome.status = night.status;
  // Tonight's database is read again below through read-only connections, which
  // leave its -wal and -shm beside it: folded back once they are all closed,
  // however this function ends.
  const FoldedAtEnd folded(outcome.db_path);
  // Made after the sweep: a Ctrl-C before the sweep's own handlers are in place leaves nothing behind.
  const ScratchFolder scratch;
  outcome.summary = render_nightly_summary(judge_night(request, night, pinned, scratch, outcome));
  write_summary(request, outcome);
  if (!request.history_dir.empty()) copy_into_history(request, scratch, outcome);
  return outcome;
}

}  // namespace attnsweep::workflows
