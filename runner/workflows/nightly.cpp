#include "runner/workflows/nightly.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <vector>

#include "runner/common/copy_file.hpp"
#include "runner/common/errors.hpp"
#include "runner/common/temp_folder.hpp"
#include "runner/common/text.hpp"
#include "runner/common/whole_file.hpp"
#include "runner/compare/compare_runs.hpp"
#include "runner/compare/comparison_report.hpp"
#include "runner/execute/sweep.hpp"
#include "runner/report/escaping.hpp"
#include "storage/run_reader.hpp"
#include "runner/workflows/scratch_folder.hpp"
#include "storage/store.hpp"
#include "storage/write_ahead_log.hpp"

namespace attnsweep::workflows {
namespace {

namespace fs = std::filesystem;

std::string utc_stamp() { return text::utc_now("%Y%m%dT%H%M%SZ"); }

bool is_directory(const std::string& path) {
  struct stat info {};
  return stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

// Whether two paths name one file (or would: neither need exist yet).
bool same_file(const std::string& a, const std::string& b) {
  std::error_code error;
  if (fs::exists(a, error) && fs::exists(b, error)) {
    const bool same = fs::equivalent(a, b, error);
    return !error && same;
  }
  const fs::path first = fs::weakly_canonical(a, error);
  if (error) return a == b;
  const fs::path second = fs::weakly_canonical(b, error);
  if (error) return a == b;
  return first == second;
}

// The folder a file of `path` goes into: its parent, or the current folder.
std::string folder_of(const std::string& path) {
  const fs::path parent = fs::path(path).parent_path();
  return parent.empty() ? "." : parent.string();
}

// Whether the file `path` is, or would be, inside `folder`, symbolic links
// followed (a link to a stored night is inside the history it points into).
bool resolves_into(const std::string& path, const std::string& folder) {
  std::error_code error;
  const fs::path file = fs::weakly_canonical(fs::absolute(path), error);
  if (error) return false;
  return same_file(file.parent_path().string(), folder);
}


// Refuses (BadInputError naming `option`) a folder that is missing, not a
// folder, or that this process cannot write into: found out before the sweep,
// not after it.
void check_writable_folder(const std::string& folder, const std::string& option) {
  struct stat info {};
  if (stat(folder.c_str(), &info) != 0) {
    throw BadInputError(option + ": " + folder + ": " + (errno == ENOENT ? "no such folder" : std::strerror(errno)));
  }
  if (!S_ISDIR(info.st_mode)) throw BadInputError(option + ": " + folder + " is not a folder");
  if (access(folder.c_str(), W_OK | X_OK) != 0) {
    throw BadInputError(option + ": cannot write into " + folder + ": " + std::strerror(errno));
  }
}

// The copies of earlier nights are made under TMPDIR after the sweep: a TMPDIR
// that is missing or cannot be written is refused before it.
void check_temp_folder() { (void)temp_folder(); }

// A history folder is created when the night's files are copied in, not before
// (bad input must leave nothing behind): until then the nearest folder that
// exists on its path must be one this process can write into.
void check_history_folder(const std::string& history) {
  if (fs::exists(history)) {
    if (!is_directory(history)) {
      throw BadInputError(history + ": --history must be a folder (the previous nights' nightly-*.db)");
    }
    check_writable_folder(history, "--history");
    return;
  }
  fs::path existing = fs::absolute(history).parent_path();
  while (!existing.empty() && !fs::exists(existing) && existing != existing.parent_path()) existing = existing.parent_path();
  try {
    check_writable_folder(existing.string(), "--history");
  } catch (const BadInputError& error) {
    throw BadInputError(std::string(error.what()) + " (to create " + history + ")");
  }
}

std::string shown_run(const std::string& path, const storage::RunRow& run) {
  return path + " run " + std::to_string(run.run_id) + " (started " + run.started_at + ")";
}

// A reader's refusal as the summary shows it: the history's name for the file,
// not the scratch copy's, and without advice meant for `run --db`.
std::string skip_reason(std::string message, const std::string& copy, const std::string& original) {
  for (std::size_t at = message.find(copy); at != std::string::npos; at = message.find(copy, at + original.size())) {
    message.replace(at, copy.size(), original);
  }
  return compare::without_db_advice(message);
}

// Copies a whole file into the history folder: written once, sequentially, and
// closed (what a bucket mount uploads); never over an existing file. A partial
// copy is removed.
// (runner/common/copy_file.hpp: a disk that fills mid-copy says "No space left
// on device", where std::filesystem::copy_file said "Input/output error").
void copy_into_history(const std::string& from, const std::string& to) { copy_to_new_file(from, to); }

// Folds tonight's write-ahead log back into its database when destroyed
// (storage/write_ahead_log.hpp): declared before the readers of the database, so
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

// Tonight's time verdicts against the window of good nights and the alert rule
// (night_window.hpp), in place of those against the newest good night alone;
// status, counts, backend and numerics stay compare's. Returns the watch items.
std::vector<std::string> apply_window(compare::Comparison& comparison, const std::vector<const Night*>& nights,
                                      const WindowSettings& window, const compare::CompareSettings& settings) {
  using compare::TimeVerdict;
  std::vector<std::string> watch;
  for (compare::CaseComparison& c : comparison.cases) {
    if (c.baseline_status != CaseStatus::ok || c.candidate_status != CaseStatus::ok) continue;  // NOT_TIMED as it was
    c.findings.erase(std::remove_if(c.findings.begin(), c.findings.end(),
                                    [](const compare::Finding& f) { return f.check == compare::Check::time; }),
                     c.findings.end());
    const CaseAlert alert = alert_for(c.key, nights, window, settings);
    c.time = alert.tonight.time;
    // Why the case is not judged: a shared GPU or a non-finite output stay compare's;
    // a marked SLOWER is the window's own.
    if (c.unjudged.rfind("SLOWER while", 0) == 0) c.unjudged.clear();
    if (c.unjudged.empty() && c.time.verdict == TimeVerdict::slower && c.time.marked()) {
      c.unjudged = "SLOWER than the window while " + c.time.cap_mark;
    }
    // The kernel list was chosen by compare's verdict against last night alone: it
    // goes with the window's verdict only where that is a change too, or where
    // a count or the backend changed. (A change only the window sees lists none.)
    const bool counted_change =
        std::any_of(c.findings.begin(), c.findings.end(), [](const compare::Finding& f) {
          return f.check == compare::Check::counts || f.check == compare::Check::backend;
        });
    const bool time_change = c.time.verdict == TimeVerdict::slower || c.time.verdict == TimeVerdict::faster;
    if (!counted_change && !time_change) c.kernels.reset();
    if (c.time.verdict == TimeVerdict::same || c.time.verdict == TimeVerdict::not_timed) continue;
    compare::Finding finding{compare::Check::time, compare::Severity::info, "time", window_text(alert.tonight),
                             (c.time.candidate_median_us ? text::fixed(*c.time.candidate_median_us, 1) + " us"
                                                         : std::string("-")) +
                                 " (n=" + std::to_string(c.time.candidate_samples) + ")",
                             ""};
    const std::string p_value = c.time.p_value ? (*c.time.p_value < 1e-4 ? "p < 1e-4" : "p = " + text::fixed(*c.time.p_value, 4))
                                               : std::string("p -");
    const std::string change =
        c.time.ratio ? std::string(*c.time.ratio >= 1 ? "+" : "") + text::fixed(100 * (*c.time.ratio - 1), 1) + "%" : "";
    if (c.time.verdict == TimeVerdict::suspect) {
      finding.detail = "SUSPECT, time not judged: " + c.time.reason;
    } else if (c.time.verdict == TimeVerdict::ambiguous) {
      finding.detail = "AMBIGUOUS: " + c.time.reason;
    } else if (c.time.marked()) {
      finding.detail = std::string(to_string(c.time.verdict)) + " " + change + " against the window, " + p_value + ", " +
                       c.time.cap_mark + ": not counted";
    } else if (c.time.verdict == TimeVerdict::faster) {
      finding.severity = compare::Severity::improvement;
      finding.detail = "FASTER " + change + " against the window, " + p_value;
    } else if (alert.alert == Alert::regression) {
      finding.severity = compare::Severity::regression;
      finding.detail = "SLOWER " + change + " against the window, " + p_value + ", on " + std::to_string(alert.streak) +
                       " nights in a row";
    } else {
      finding.detail = "WATCH: SLOWER " + change + " against the window, " + p_value + ", on " +
                       std::to_string(alert.streak) + " of the " + std::to_string(window.consecutive) +
                       " nights in a row that make a regression";
      watch.push_back(c.key.label() + ": " + change + " against " + window_text(alert.tonight));
    }
    c.findings.push_back(std::move(finding));
  }
  return watch;
}

}  // namespace

std::vector<std::string> night_files(const std::string& history_dir) {
  static const std::regex name(R"(nightly-[0-9]{8}T[0-9]{6}Z\.db)");
  std::vector<std::string> nights;
  std::error_code listing;
  if (!fs::exists(history_dir, listing)) return nights;  // created when tonight's files go in
  for (const auto& entry : fs::directory_iterator(history_dir, listing)) {
    const std::string file = entry.path().filename().string();
    std::error_code kind;
    if (entry.is_regular_file(kind) && std::regex_match(file, name)) nights.push_back(file);
  }
  if (listing) throw BadInputError(history_dir + ": cannot list the --history folder: " + listing.message());
  std::sort(nights.begin(), nights.end());  // oldest first: the name is the UTC stamp
  return nights;
}

std::vector<std::string> good_nights(const std::string& history_dir, const std::string& scratch_dir,
                                     DeviceKind device_kind, int count, std::time_t now, std::string& skipped) {
  std::vector<std::string> good;
  std::vector<std::string> nights = night_files(history_dir);
  std::reverse(nights.begin(), nights.end());  // newest first
  for (const auto& night : nights) {
    if (static_cast<int>(good.size()) >= count) break;
    const std::string original = history_dir + "/" + night;
    const std::string copy = scratch_dir + "/" + night;
    const std::string misnamed = night_name_problem(night, now);
    if (!misnamed.empty()) {
      skipped += "skipped " + night + ": " + misnamed + "\n";
      continue;
    }
    std::error_code error;
    fs::copy_file(original, copy, fs::copy_options::overwrite_existing, error);
    if (error) {
      skipped += "skipped " + night + ": cannot copy it (" + error.message() + ")\n";
      continue;
    }
    try {
      // An older schema (the night before an upgrade) is read through a migrated copy.
      const compare::ReadableDatabase database(copy);
      const auto run = database.reader().latest_run();
      if (run) database.reader().check_run(run->run_id);  // a damaged night is skipped, by its value (issue 33)
      const std::string not_its_night = run ? night_run_problem(night, run->started_at) : std::string();
      if (!not_its_night.empty()) {
        skipped += "skipped " + night + ": " + not_its_night + "\n";
        fs::remove(copy, error);
        continue;
      }
      // A night measured beside another process on its GPU cannot be a baseline:
      // every case compared with it would go unjudged (issue 21, item 4).
      int shared_cases = 0;
      if (run && run->status == RunStatus::done && run->device.kind() == device_kind) {
        for (const auto& c : database.reader().cases(run->run_id)) {
          shared_cases += c.status == CaseStatus::ok && c.other_processes.value_or(0) > 0;
        }
        if (shared_cases == 0) {
          good.push_back(copy);
          continue;
        }
      }
      if (shared_cases > 0) {
        skipped += "skipped " + night + ": " + std::to_string(shared_cases) +
                   " of its cases were measured while another process computed on the GPU\n";
      } else if (run && run->status == RunStatus::done) {
        skipped += "skipped " + night + ": it ran on " + run->device.to_string() + ", tonight on " +
                   (device_kind == DeviceKind::cuda ? "cuda" : "cpu") + "\n";
      } else {
        skipped += "skipped " + night + ": its latest run is " + (run ? to_string(run->status) : "absent") + "\n";
      }
    } catch (const std::exception& problem) {
      skipped += "skipped " + night + ": " + skip_reason(problem.what(), copy, original) + "\n";
    }
    fs::remove(copy, error);  // only the good nights' copies are kept
  }
  return good;
}

NightlyOutcome run_nightly(const NightlyRequest& request) {
  if (request.history_dir.empty() == request.baseline.empty()) {
    throw BadInputError("nightly needs exactly one of --history DIR (compare with the previous night there) and "
                        "--baseline DATABASE[:RUN] (compare with a pinned run)");
  }
  NightlyOutcome outcome;
  outcome.stamp = utc_stamp();
  outcome.db_path = request.db_path.empty() ? "nightly-" + outcome.stamp + ".db" : request.db_path;
  outcome.summary_path = request.summary_path;
  if (outcome.summary_path.empty()) {
    const fs::path db(outcome.db_path);
    outcome.summary_path = (db.parent_path() / (db.stem().string() + ".md")).string();
  }

  // Everything that would only fail after the sweep is checked before it.
  if (!request.history_dir.empty()) {
    check_history_folder(request.history_dir);
    // SQLite never runs in the history (it may be a bucket mount), and a stored
    // night must not get tonight's run appended to it.
    if (same_file(folder_of(outcome.db_path), request.history_dir) ||
        resolves_into(outcome.db_path, request.history_dir)) {
      throw BadInputError("--db " + outcome.db_path + " is in the --history folder " + request.history_dir +
                          " (itself or through a symbolic link); tonight's database goes on local disk elsewhere, "
                          "and is copied in at the end");
    }
  }
  if (request.db_path.empty() && fs::exists(outcome.db_path)) {
    // Another nightly started this second in this folder: the two would share one database.
    throw BadInputError(outcome.db_path + ": already exists (another nightly started this second here?); nothing ran");
  }
  if (same_file(outcome.summary_path, outcome.db_path)) {
    throw BadInputError("--summary: " + outcome.summary_path + " is the night's database (--db " + outcome.db_path +
                        "); give another --summary, or a --db that does not end in .md");
  }
  if (!request.history_dir.empty() && (same_file(folder_of(outcome.summary_path), request.history_dir) ||
                                      resolves_into(outcome.summary_path, request.history_dir))) {
    // A stored night's summary is never written over; tonight's is copied in at the end.
    throw BadInputError("--summary " + outcome.summary_path + " is in the --history folder " + request.history_dir +
                        " (itself or through a symbolic link); the summary goes elsewhere, and is copied in at the end");
  }
  check_writable_folder(folder_of(outcome.summary_path), "--summary");
  check_temp_folder();
  if (is_directory(outcome.summary_path)) {
    throw BadInputError("--summary: " + outcome.summary_path + " is a folder; give the summary's file name");
  }
  if (!request.history_dir.empty()) {
    outcome.history_db = request.history_dir + "/nightly-" + outcome.stamp + ".db";
    outcome.history_summary = request.history_dir + "/nightly-" + outcome.stamp + ".md";
    if (fs::exists(outcome.history_db) || fs::exists(outcome.history_summary)) {
      throw BadInputError(outcome.history_db + ": already exists (another nightly started this second?); nothing ran");
    }
  }

  // The baseline first: bad input is refused before an expensive sweep.
  std::string skipped;
  std::optional<std::string> baseline_path;
  std::vector<std::string> window_copies;  // with --history: the good nights, newest first (the first is the baseline)
  compare::RunArgument baseline_argument;
  if (!request.baseline.empty()) {
    baseline_argument = compare::parse_run_argument(request.baseline, "--baseline");
    // Tonight's run goes into a database of its own: written into the baseline's
    // file, it would change a pinned file, and be the baseline's latest run.
    if (same_file(baseline_argument.path, outcome.db_path)) {
      throw BadInputError("--baseline " + baseline_argument.path + " is the night's database (--db " +
                          outcome.db_path + "); the baseline is only read: give another --db");
    }
    if (same_file(baseline_argument.path, outcome.summary_path)) {
      throw BadInputError("--baseline " + baseline_argument.path + " is where the summary would go (--summary " +
                          outcome.summary_path + "); give another --summary");
    }
    try {
      const compare::ReadableDatabase check(baseline_argument.path);
      // Pinned now: "the latest run" means the latest before tonight's.
      baseline_argument.run_id = compare::resolve_run(check.reader(), baseline_argument, "--baseline");
      check.reader().check_run(*baseline_argument.run_id);  // a damaged baseline is refused before the sweep
    } catch (const BadInputError& error) {
      const std::string message = error.what();
      throw BadInputError(message.rfind("--baseline", 0) == 0 ? message : "--baseline: " + message);
    }
    baseline_path = baseline_argument.path;
  } else if (fs::exists(request.history_dir)) {
    // The night to compare with is chosen after the sweep (it must have run on
    // tonight's kind of device); a folder that cannot be listed is refused now.
    std::error_code listing;
    fs::directory_iterator(request.history_dir, listing);
    if (listing) throw BadInputError(request.history_dir + ": cannot list the --history folder: " + listing.message());
  }

  execute::SweepRequest sweep;
  sweep.config_path = request.config_path;
  sweep.db_path = outcome.db_path;
  sweep.device = request.device;
  // Two nightlies started in one second in one folder: the second is refused, not mixed in.
  sweep.new_database = request.db_path.empty();
  const execute::SweepOutcome night = execute::run_sweep(sweep);
  outcome.run_id = night.run_id;
  outcome.status = night.status;
  // Tonight's database is read again below through read-only connections, which
  // leave its -wal and -shm beside it: folded back once they are all closed,
  // however this function ends.
  const FoldedAtEnd folded(outcome.db_path);
  // Made after the sweep: a Ctrl-C before the sweep's own handlers are in place leaves nothing behind.
  ScratchFolder scratch;
  if (request.baseline.empty() && night.status == RunStatus::done) {
    window_copies = good_nights(request.history_dir, scratch.path(), night.device.kind(),
                                request.window.window + request.window.consecutive - 1,
                                stamp_time(outcome.stamp).value_or(std::time(nullptr)), skipped);
    if (!window_copies.empty()) baseline_path = window_copies.front();
  }

  std::string summary = "# attnsweep nightly " + outcome.stamp + "\n\n";
  // Paths and history file names are text, never markup (report/escaping.hpp).
  summary += "- config: " + report::markdown_code(request.config_path) + "\n";
  summary += "- tonight: " + report::markdown_code(outcome.db_path) + " run " + std::to_string(night.run_id) + ", " +
             std::to_string(night.cases.size()) + " of " + std::to_string(night.planned_cases) +
             " planned cases, status " + to_string(night.status) + "\n";
  if (!skipped.empty()) {
    std::string lines = std::regex_replace(skipped, std::regex("\n(?=.)"), "; ");
    if (lines.back() == '\n') lines.pop_back();
    summary += "- history: " + report::markdown_inline(lines) + "\n";
  }
  if (night.status != RunStatus::done) {
    summary += "\n**The night did not finish (" + std::string(to_string(night.status)) +
               "): nothing was compared.**\n";
    outcome.regression = true;
  } else if (!baseline_path) {
    const bool skipped_any = !skipped.empty();
    summary += "\nNo previous finished night on " + night.device.to_string() + " in " +
               report::markdown_code(request.history_dir) +
               (skipped_any ? " that can be a baseline (see the skipped nights above)" : std::string()) +
               ": tonight's run is the first baseline; nothing was compared.\n";
    // A first night measured beside another process is no baseline either, and not a pass.
    int shared = 0;
    for (const auto& c : storage::RunReader(outcome.db_path).cases(night.run_id)) {
      shared += c.status == CaseStatus::ok && c.other_processes.value_or(0) > 0;
    }
    if (shared > 0) {
      summary += "\n**" + std::to_string(shared) + " of tonight's cases were measured while another process computed "
                 "on the GPU: INCONCLUSIVE.**\n";
      outcome.inconclusive = true;
    }
  } else {
    const compare::ReadableDatabase baseline_database(*baseline_path);
    const storage::RunReader& baseline = baseline_database.reader();
    const std::int64_t baseline_run = compare::resolve_run(baseline, baseline_argument, "--baseline");
    const storage::RunReader candidate(outcome.db_path);
    compare::Comparison comparison =
        compare::compare_runs(baseline, baseline_run, candidate, night.run_id, request.settings);
    // The history's name for the baseline, not the scratch copy's.
    const std::string shown_path =
        request.baseline.empty() ? request.history_dir + "/" + fs::path(*baseline_path).filename().string()
                                 : *baseline_path;
    comparison.baseline.path = shown_path;
    outcome.baseline = shown_run(shown_path, *baseline.run(baseline_run));
    summary += "- baseline: " + report::markdown_code(outcome.baseline);
    if (baseline_database.migrated_from()) {
      summary += " (schema " + std::to_string(*baseline_database.migrated_from()) + ", read through a migrated copy)";
    }
    summary += "\n";
    if (!window_copies.empty()) {
      // Times: against the window of the last good nights, and the alert rule.
      std::vector<Night> nights{read_night(candidate, night.run_id)};
      std::vector<std::string> names;
      for (const std::string& copy : window_copies) {
        const compare::ReadableDatabase database(copy);
        nights.push_back(read_night(database.reader(), database.reader().latest_run()->run_id));
        if (static_cast<int>(names.size()) < request.window.window) names.push_back(fs::path(copy).filename().string());
      }
      std::vector<const Night*> ordered;
      for (const Night& n : nights) ordered.push_back(&n);
      outcome.window_nights = static_cast<int>(names.size());
      summary += "- time window: " + std::to_string(names.size()) + " good night" + (names.size() == 1 ? "" : "s") +
                 " (" + report::markdown_inline(text::join(names, ", ")) + "): per case the median of their medians; " +
                 "a time regression needs " + std::to_string(request.window.consecutive) + " night" +
                 (request.window.consecutive == 1 ? "" : "s") + " in a row slower than the window\n";
      outcome.watch = apply_window(comparison, ordered, request.window, request.settings);
    }
    summary += "\n";
    if (!outcome.watch.empty()) {
      summary += "**Watch** (" + std::to_string(outcome.watch.size()) + " case" + (outcome.watch.size() == 1 ? "" : "s") +
                 " slower than the window tonight, not yet on " + std::to_string(request.window.consecutive) +
                 " nights in a row: not a failure; a regression if slower again next night)\n\n";
      for (const std::string& item : outcome.watch) summary += "- " + report::markdown_inline(item) + "\n";
      summary += "\n";
    }
    for (const compare::CaseComparison& c : comparison.cases) {
      if (c.time.verdict == compare::TimeVerdict::suspect) outcome.suspect.push_back(c.key.label() + ": " + c.time.reason);
    }
    if (!outcome.suspect.empty()) {
      summary += "**Suspect** (" + std::to_string(outcome.suspect.size()) + " case" +
                 (outcome.suspect.size() == 1 ? "" : "s") + " with a `suspect` validity label: their times are not "
                 "judged tonight, their counts, backend, status and numerics are; docs/measurement.md, \"Validity\")\n\n";
      for (const std::string& item : outcome.suspect) summary += "- " + report::markdown_inline(item) + "\n";
      summary += "\n";
    }
    if (comparison.cases.empty()) {
      // Another kind of device, or other shapes: a gate that compared nothing must not pass.
      summary += "**No case of tonight's run is in the baseline: nothing was compared** (another device kind, "
                 "or another config: the warnings below say which).\n\n";
      outcome.compared_nothing = true;
    }
    summary += compare::render(comparison, compare::Format::markdown);
    outcome.regression = comparison.has_regression();
    outcome.inconclusive = comparison.inconclusive();
  }
  outcome.summary = summary;
  // The summary is optional, the night is not: a summary that cannot be written
  // (its disk full) is reported by the caller, and the night still goes into the history.
  try {
    write_whole_file(outcome.summary_path, summary, "--summary");
  } catch (const std::exception& error) {
    outcome.summary_error = error.what();
  }

  if (!request.history_dir.empty()) {
    // Whole files into the history folder: a consistent snapshot of the database
    // made on local disk (SQLite never runs in the history, which may be a bucket
    // mount), copied in whole, then the summary (from its text, written locally
    // first: the --summary file may be missing, or a device). A failure here leaves
    // tonight's local files as they are and is reported, with the summary, by the caller.
    try {
      std::error_code ignored;
      fs::create_directories(request.history_dir, ignored);
      const std::string snapshot = scratch.path() + "/tonight.db";
      storage::snapshot_database(outcome.db_path, snapshot);
      copy_into_history(snapshot, outcome.history_db);
      const std::string summary_copy = scratch.path() + "/tonight.md";
      write_whole_file(summary_copy, summary, "the summary's copy");
      copy_into_history(summary_copy, outcome.history_summary);
    } catch (const std::exception& error) {
      outcome.history_error = std::string("--history: ") + error.what() + "; tonight's files are kept at " +
                              outcome.db_path +
                              (outcome.summary_error.empty() ? " and " + outcome.summary_path : std::string());
    }
  }
  return outcome;
}

}  // namespace attnsweep::workflows
