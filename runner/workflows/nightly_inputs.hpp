#pragma once
// What nightly refuses before it runs (nightly.hpp lists it): everything that
// would only fail after an expensive sweep is checked first, and bad input
// leaves nothing behind. Apart from the night's steps because it is long and
// only about paths: where the night's files go and what they must not be.
#include <string>

#include "runner/compare/run_argument.hpp"
#include "runner/workflows/nightly_outcome.hpp"
#include "runner/workflows/nightly_request.hpp"

namespace attnsweep::workflows {

// The night's files: its stamp, database and summary (given or by default),
// and with --history their copies there. Throws BadInputError unless exactly
// one of --history and --baseline is given.
NightlyOutcome name_night_files(const NightlyRequest& request);

// Refuses (BadInputError) a history folder, database or summary that the night
// could not use, create or write, or that is another of the night's files.
void check_night_files(const NightlyRequest& request, const NightlyOutcome& outcome);

// Refuses (BadInputError) `output`, given as `option` (--summary, --summary-json),
// when it would replace an input of the night: checked before the sweep, and
// again just before the file is written (a link planted meanwhile is refused too).
void refuse_night_output(const NightlyRequest& request, const NightlyOutcome& outcome, const std::string& output,
                         const std::string& option);

// With --baseline: the pinned run, checked whole (its run id fixed now, so
// "latest" is the latest before tonight's). With --history: nothing to pin (the
// night to compare with is chosen after the sweep), but the folder must be listable.
compare::RunArgument check_baseline(const NightlyRequest& request, const NightlyOutcome& outcome);

}  // namespace attnsweep::workflows
