#pragma once
// What one night of `attnsweep nightly` came to (nightly.hpp): its files, its
// run, what was judged and how, and what could not be written.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runner/common/identities.hpp"
#include "runner/compare/compare_runs.hpp"

namespace attnsweep::workflows {

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

}  // namespace attnsweep::workflows
