#pragma once
// run --publish DIR: when a run ends (done, interrupted or failed), copy what
// it stored to DIR as whole files: the database as one consistent file (no
// -wal or -shm beside it) and the run's trace files under DIR/traces. Made for
// a Hugging Face bucket mounted into a job, which has no file locking and
// uploads a file when it is closed: SQLite must never run on it, but a finished
// file copied onto it is safe. docs/hf-jobs.md.
#include <cstdint>
#include <optional>
#include <string>

#include "runner/execute/sweep.hpp"

namespace attnsweep::workflows {

struct Published {
  std::string database;  // DIR/<the database's file name>
  int traces = 0;        // trace files copied into DIR/traces
};

// Throws BadInputError, before the sweep, when publishing into `directory`
// could lose data: DIR/<name> is the database itself (--publish into its own
// folder), or it is a file that holds anything the database lacks (another
// database, a run of another job, or no database at all). An earlier copy of
// this database (every run it holds is in the database) may be replaced.
void check_publish_target(const std::string& db_path, const std::string& directory);

// Throws std::runtime_error naming DIR when a copy fails, BadInputError as
// check_publish_target; the local database is never changed. The copy is made
// in a private file beside the database, removed afterwards.
Published publish_run(const std::string& db_path, std::int64_t run_id, const std::string& directory);

// The sweep's end for run --publish DIR: check_publish_target before the sweep,
// publish_run when it ends; `published` receives where the copies went (it must
// outlive the sweep).
execute::RunEnd publish_at_end(const std::string& directory, std::optional<Published>& published);

}  // namespace attnsweep::workflows
