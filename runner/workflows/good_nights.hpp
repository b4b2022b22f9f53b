#pragma once
// Which nights of a history folder nightly compares with (docs/reproducibility.md,
// "The window and the alert rule"): the nights are files named by their UTC
// stamp, and a night is good when it passed its own gate. A good night is read
// once, here, and handed on open: compare and the window judge the same copy.
#include <ctime>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "runner/common/identities.hpp"
#include "runner/storage/readable_database.hpp"
#include "runner/compare/run_cases.hpp"

namespace attnsweep::workflows {

// The nightly-<stamp>.db files of `history_dir`, oldest first (the name is the
// UTC stamp); none when the folder does not exist. Throws BadInputError when it
// cannot be listed.
std::vector<std::string> night_files(const std::string& history_dir);

// What a file of a history folder is by its name, the one classifier nightly,
// history and accept share: "a night" (nightly-*.db), "a night's summary"
// (nightly-*.md), "an acceptance record" (accept-*.json), or "" for any other name.
std::string history_file_kind(const std::string& name);

// Refuses (BadInputError, "<option> <output>: ...") an output that is, or would
// be, a file of the history `history_dir` reads: in that folder (itself or
// through a symbolic link) under a name history_file_kind knows, existing or
// not, or a hard link elsewhere to such a file. Part of the one rule of every
// output (runner/common/whole_file.hpp) for the commands that read a history.
void refuse_history_file(const std::string& output, const std::string& option, const std::string& history_dir);

// One good night, copied out of the history, open and read.
struct GoodNight {
  std::string file;                                     // nightly-<stamp>.db, its name in the history
  std::unique_ptr<storage::ReadableDatabase> database;  // the scratch copy (an older schema: through a migrated copy)
  compare::RunCases run;                                // its latest run, read through `database`
};

// The newest `count` good nights of `history_dir` (by name, which is the UTC
// stamp), newest first, each copied into `scratch_dir`. A night is good when it
// passed its own gate, the checks that need no other night: its stamp is a
// night's before `now`, tonight's (night_window.hpp: night_name_problem,
// night_run_problem), it is readable, its latest run is done, it ran on
// `device_kind` (tonight's: a night on another kind of device has no case to
// compare), and no case of it was measured while another process computed on
// its GPU (such a night is inconclusive: neither good nor bad, it is left out).
// Empty when there is none, or no such folder yet. Every night passed over on
// the way is named with its reason in `skipped`, one line each.
std::vector<GoodNight> good_nights(const std::string& history_dir, const std::string& scratch_dir,
                                   DeviceKind device_kind, int count, std::time_t now, std::string& skipped);

// The one night `night` (nightly-<stamp>.db) of `history_dir` judged by the same
// gate, on whatever device it ran (accept's question: would nightly compare
// with it?). The night when it is good; else nothing, and why in `why` (one
// line, without the "skipped <night>: " good_nights puts before it). A copy into
// `scratch_dir` that fails (a full TMPDIR) throws std::runtime_error instead.
std::optional<GoodNight> good_night(const std::string& history_dir, const std::string& night,
                                    const std::string& scratch_dir, std::time_t now, std::string& why);

}  // namespace attnsweep::workflows
