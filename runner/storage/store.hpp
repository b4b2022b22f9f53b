#pragma once
// The one way results reach the database (SQLite, runner/storage/schema.sql). Each
// finished case is committed in its own transaction, so a crash loses at most
// the case in flight. A run is claimed by the process that runs it (pid, host,
// heartbeat), so two processes never run one run at once. Reading results
// back is runner/storage/run_reader.hpp's job.
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "runner/common/errors.hpp"
#include "runner/common/identities.hpp"
#include "runner/config/measure_settings.hpp"
#include "runner/device/environment.hpp"
#include "runner/measure/case_result.hpp"
#include "runner/plan/case.hpp"
#include "runner/storage/claim.hpp"
#include "runner/storage/claim_row.hpp"
#include "runner/storage/run_device.hpp"
#include "runner/storage/run_record.hpp"
#include "runner/storage/schema_version.hpp"

namespace attnsweep::storage {

// claim_run() found the run held by another live process. Exit code 2, like
// every BadInputError: nothing was changed.
class RunClaimedError : public BadInputError {
 public:
  RunClaimedError(const std::string& path, std::int64_t run_id, Claim holder, std::string claimed_at,
                  std::string heartbeat_at, std::optional<std::int64_t> heartbeat_age_seconds);

  std::int64_t run_id;
  Claim holder;
  std::string claimed_at, heartbeat_at;  // UTC ISO 8601, as stored
  std::optional<std::int64_t> heartbeat_age_seconds;
};

class Store {
 public:
  enum class Open {
    create_if_absent,  // attnsweep run: an absent or empty (0-byte) file becomes a new database
    // --resume, merge's output: the database must be there; nothing is
    // created, and nothing written (not even the journal mode or a migration
    // of an older schema) before the first write: a command refused after the
    // open leaves the file byte-identical. claim_run migrates in its own
    // transaction, so a refused claim changes nothing either.
    existing,
    // --isolate workers: as existing, without PRAGMA quick_check, which reads
    // the whole file (0.15 s per 50 MB) and which their parent ran at its open.
    existing_without_quick_check,
    // nightly's own nightly-<stamp>.db: as create_if_absent, but a file that is
    // there already (or made by another process meanwhile) is refused.
    create_new,
  };

  // Opens the database at `path`; the create modes bring its schema to the
  // current version now, the existing ones at the first write (see existing).
  // Before anything is written (not even the journal mode) the file must be a
  // regular file, an attnsweep database (PRAGMA application_id, or for files
  // made before version 5 their tables) no newer than this program, and pass
  // PRAGMA quick_check. Throws BadInputError naming the path and why otherwise,
  // the file left byte-identical; also for a name SQLite uses beside a
  // database (X.db-wal, runner/storage/database_files.hpp). An absent database is
  // made whole in a file of its own and linked into place (new_database.hpp):
  // it appears complete or not at all, and when another process makes it
  // first, that one is opened. A file this constructor created in place (an
  // empty one, or where hard links are not supported) is removed again when
  // creating the schema in it fails, and the first error is reported.
  explicit Store(const std::string& path, Open mode = Open::create_if_absent);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // A new run, status running, started now and claimed by `owner`; returns its run_id.
  std::int64_t begin_run(const RunRecord& run, const Claim& owner = Claim::this_process());
  // --resume: takes the run for `claimant` under a write transaction and sets
  // it running again (no finished_at). Throws RunClaimedError when another
  // process holds it and its claim is not stale; stale means the holder's pid
  // is gone from this host, or its heartbeat is older than
  // kClaimStaleAfterSeconds. Claiming a run one already holds renews the claim.
  // Throws BadInputError when there is no such run.
  void claim_run(std::int64_t run_id, const Claim& claimant = Claim::this_process());
  // Tells other processes the holder is alive: sets heartbeat_at to now if
  // `claimant` still holds the run. False when it no longer does (taken over
  // after its claim went stale): stop running the run then, and leave it alone.
  bool heartbeat(std::int64_t run_id, const Claim& claimant = Claim::this_process());
  // One finished case with its kernels, ops and samples, in one transaction;
  // returns its case_id, or nothing when the run already has a case at that
  // plan_index (stored by an earlier or another process): then nothing is
  // stored. Throws SQLite::Exception (and stores nothing) when the schema
  // refuses the row otherwise.
  std::optional<std::int64_t> add_case(std::int64_t run_id, const Case& c, const CaseResult& result);
  // Sets the run's final status and finished_at and releases the claim, if
  // `claimant` holds the run (or nobody does). False, and nothing changed,
  // when another process has taken it over.
  bool finish_run(std::int64_t run_id, RunStatus status, const Claim& claimant = Claim::this_process());
  // The run's claims (issue 37), in one transaction; a claim the run has already
  // (same file and name: a resumed run) is left as it is.
  void add_claims(std::int64_t run_id, const std::vector<ClaimRow>& claims);
  // Sets runs.gpus: a --gpus run resumed on other GPUs lists every one it used.
  void set_run_gpus(std::int64_t run_id, const std::string& gpus);
  // Records a device of the run (run_devices), with the run's shard index.
  // False, and nothing changed, when the run has that device already.
  bool add_run_device(std::int64_t run_id, const RunDevice& device);

  const std::string& path() const { return path_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string path_;
};

std::string utc_now_iso8601();
// Writes a consistent copy of the database at `path` into `target` as one
// file (VACUUM INTO, from a read-only connection: the source is not changed).
// `target` must not exist, or be empty. Throws BadInputError naming the paths.
void snapshot_database(const std::string& path, const std::string& target);

// The run_uuid of every run in the database at `path`, read as immutable: no
// lock, no -shm file (it may be a copy on a bucket mount, where SQLite must
// not run). Nothing when it is not an attnsweep database.
std::optional<std::set<std::string>> stored_run_uuids(const std::string& path);

// A trace that --publish copies beside the database's copy.
struct PublishedTrace {
  std::int64_t case_id = 0;
  std::string file;    // where it is now
  std::string stored;  // its path from the copy's folder (traces/<name>)
};
// In the copy at `snapshot` (a file nothing else has open): points the run's
// cases at their published traces, NULL for the others, and marks the run's
// paths relative to the database ('database').
void point_traces_at(const std::string& snapshot, std::int64_t run_id, const std::vector<PublishedTrace>& traces);

// A random (version 4) UUID: runs.run_uuid.
std::string random_uuid();

}  // namespace attnsweep::storage
