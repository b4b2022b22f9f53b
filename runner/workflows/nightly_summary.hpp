#pragma once
// A night's markdown summary (docs/reproducibility.md), written from typed
// facts the way every report is: nightly decides what happened, this file alone
// says it in markdown (the comparison itself is compare's markdown). Stored
// text, paths and file names go through report/escaping as text, never markup.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "runner/common/identities.hpp"
#include "runner/compare/compare_runs.hpp"

namespace attnsweep::workflows {

// What the night came to.
enum class NightEnd {
  unfinished,   // the sweep did not finish: nothing compared
  first_night,  // no good night to compare with: tonight is the first baseline
  compared,     // compared with a baseline (a pinned run, or the newest good night and the window)
};

struct NightlySummary {
  std::string stamp, config_path, db_path;
  std::int64_t run_id = 0;
  std::size_t stored_cases = 0;
  int planned_cases = 0;
  RunStatus status = RunStatus::done;
  std::string skipped;  // the history's nights passed over, a line each ("skipped FILE: why")
  NightEnd end = NightEnd::compared;

  // first_night: where no baseline was found, and tonight's cases measured beside another process.
  std::string device, history_dir;
  int shared_cases = 0;

  // compared:
  std::string baseline;                      // "FILE run N (started ...)"
  std::optional<int> baseline_migrated_from;  // the baseline's older schema version
  std::vector<std::string> window_nights;    // with --history: the time window's nights, newest first
  int consecutive = 0;                       // --consecutive
  std::vector<std::string> watch, suspect;   // NightlyOutcome's
  std::vector<std::string> trust_reasons;    // NightlyOutcome's: why the night is no pass, first in the summary
  std::vector<std::string> accepted;         // NightlyOutcome's
  std::optional<compare::Comparison> comparison;
};

std::string render_nightly_summary(const NightlySummary& summary);

}  // namespace attnsweep::workflows
