#pragma once
// `attnsweep nightly`: run a pinned sweep, compare it with the previous nights
// of a history folder (counts, backend, status and numerics against the newest
// good night; times against a window of the last good nights, with the alert
// rule of night_window.hpp) or with a pinned baseline (everything against that
// one run), and write the database and a markdown summary (docs/reproducibility.md).
// A history folder may be a bucket mount (no file locking, uploads on close):
// SQLite never runs on it. The night runs in a local database, earlier nights
// are copied out before they are read (good_nights.hpp), and the finished files
// are copied in. The steps: check the inputs (nightly_inputs.hpp), sweep, judge
// with compare and the window (window_verdicts.hpp), write the summary
// (nightly_summary.hpp), copy into the history.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runner/common/identities.hpp"
#include "runner/compare/compare_runs.hpp"
#include "runner/workflows/night_window.hpp"

namespace attnsweep::workflows {

struct NightlyRequest {
  std::string config_path;
  std::string history_dir;  // previous nights, and where this one is copied; or
  std::string baseline;     // DATABASE[:RUN], a pinned baseline (exactly one of the two)
  std::string db_path;      // the night's local database; empty: nightly-<stamp>.db here
  std::string summary_path; // empty: the database's path with .md
  std::string json_path;    // --summary-json: the night as JSON (nightly_json.hpp); empty: none
  std::optional<Device> device;
  compare::CompareSettings settings;
  WindowSettings window;    // --window, --consecutive: with --history only
};

struct NightlyOutcome {
  std::string stamp;         // UTC, 20261201T031500Z: names the night's files
  std::string db_path, summary_path;
  std::int64_t run_id = 0;
  RunStatus status = RunStatus::done;
  std::string baseline;      // "FILE run N", or empty on a first night
  bool regression = false;
  // With --history: cases slower tonight than the window, but not yet on
  // --consecutive nights in a row ("label: +98.2% against ..."); not a failure.
  std::vector<std::string> watch;
  // Cases whose time was not judged tonight because a validity label was
  // `suspect` ("label: which side and why"), counted apart from the verdicts.
  std::vector<std::string> suspect;
  // Cases whose time could not be judged (compare's CaseComparison::unjudged: a
  // shared GPU, a non-finite output, a capped slowdown, no night of the window
  // that timed them), "label: why" (issue 55, item 4).
  std::vector<std::string> unjudged;
  int window_nights = 0;     // good nights in the time window (0: pinned baseline or first night)
  bool inconclusive = false;  // no regression, but cases whose time could not be judged (shared GPU, ...)
  // Why tonight is no pass though nothing regressed (night_trust.hpp): the environment changed in a
  // fact that moves times, or too few cases were judged on time. Non-empty makes the night inconclusive.
  std::vector<std::string> trust_reasons;
  int timed_on_both = 0, judged_on_time = 0;
  std::vector<std::string> accepted;  // the acceptances that restarted cases' windows tonight (acceptance.hpp)
  std::optional<compare::Comparison> comparison;  // as judged (the window's times with --history)
  bool compared_nothing = false;  // a baseline, but no case of tonight's run in it (a failed night too)
  std::string summary;       // the markdown, as written
  std::string history_db, history_summary;  // the copies in the history folder; empty without one
  std::string history_error;  // why the copies into the history failed; empty when they did not
  // Why the summary could not be written to summary_path ("--summary FILE: cannot
  // write ...: No space left on device"); empty when it was. The night is stored
  // and copied into the history all the same.
  std::string summary_error;
};

// Throws BadInputError for bad input before anything runs: both or neither of
// history and baseline; a history path that is not a folder or cannot be
// written (or created); a --db in the history folder; a summary whose folder is missing or cannot be
// written, that is a folder, or that is the database itself (--db x.md); a baseline that is not
// an attnsweep database, lacks the run, or is the night's --db or --summary;
// the default database (nightly-<stamp>.db here) already there. Then what
// run_sweep throws. A failure to write the summary is summary_error, and one
// to copy into the history history_error: neither stops the other.
NightlyOutcome run_nightly(const NightlyRequest& request);

}  // namespace attnsweep::workflows
