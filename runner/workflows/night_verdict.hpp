#pragma once
// What a night comes to, in one word and one exit code (docs/reproducibility.md,
// "Exit codes"): the printed last line, the markdown's and the JSON summary's
// verdict all come from here, so they cannot disagree.
#include <string>

#include "runner/workflows/nightly.hpp"

namespace attnsweep::workflows {

struct NightVerdict {
  // unfinished, regression, nothing_compared, inconclusive, watch, pass, first_night
  std::string name;
  int exit_code = 0;
  std::string line;  // "nightly: REGRESSION (exit 1)"
};

// From the night's outcome alone; failures to write its files (summary_error,
// history_error) and a signal after the sweep are the command's to add.
NightVerdict night_verdict(const NightlyOutcome& outcome);

}  // namespace attnsweep::workflows
