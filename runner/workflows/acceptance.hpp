#pragma once
// Accepting a change (issue 38; docs/reproducibility.md, "Accepting a change"):
// a slowdown the team keeps (a new cuDNN that is slower on one shape) would fail
// every night until the window forgot it. `attnsweep accept DIR` records, in
// the history folder, that the change seen on a named night is accepted for the
// named cases, with a reason, who and when: one new file per acceptance
// (accept-<stamp>.json, written once: a bucket mount takes whole files), nothing
// deleted. nightly --history then restarts those cases' time window at that
// night (older nights no longer count for them); history lists the acceptances.
#include <string>
#include <vector>

#include "runner/compare/case_key.hpp"

namespace attnsweep::workflows {

inline constexpr const char* kAcceptanceFormat = "attnsweep-accept/1";

struct Acceptance {
  std::string file;                // accept-<stamp>.json in the history folder
  std::string night;               // the stamp of the night the accepted change was first seen
  std::vector<std::string> cases;  // globs on the case's label ("sdpa_cudnn 1x32/8x8192x128 *")
  std::string reason, by, at;      // why, who, when (UTC, 2026-12-05T03:15:00Z)

  bool covers(const compare::CaseKey& key) const;
};

struct AcceptRequest {
  std::string history_dir;
  std::string night;  // a stamp (20261205T031500Z) or a night's file name (nightly-<stamp>.db)
  std::vector<std::string> cases;
  std::string reason, by;  // by: empty takes $USER
};

// Writes the acceptance into the history folder and returns it: the file is
// created there once (O_EXCL, no temporary file anywhere). Throws BadInputError
// (nothing written) for a folder that is no history, a night that is not in it
// or that nightly skips (good_nights.hpp: stamped in the future, off its run,
// unreadable, unfinished, measured beside another process), no case pattern or
// reason, an empty pattern, a pattern that matches no case of the night, or an
// acceptance file of this second already there; std::runtime_error with the
// system's reason when the file cannot be written (a full disk: exit 1).
Acceptance record_acceptance(const AcceptRequest& request);

// The acceptances of a history folder, oldest first; a file that cannot be read
// or is not one (not a regular file, over 1 MiB, not JSON, a field missing or
// of the wrong kind) is skipped, named with why in `skipped` (a line each).
std::vector<Acceptance> read_acceptances(const std::string& history_dir, std::string& skipped);

// The newest acceptance covering `key` (the latest night), or null.
const Acceptance* acceptance_for(const std::vector<Acceptance>& acceptances, const compare::CaseKey& key);

}  // namespace attnsweep::workflows
