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
#include "runner/workflows/nightly_outcome.hpp"
#include "runner/workflows/nightly_request.hpp"

namespace attnsweep::workflows {

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
