#pragma once
// How every reader opens a results database (RunReader, so compare, report
// and nightly --baseline; merge's inputs; query; copies made of a database):
// read-only, so that nothing is written, not even a checkpoint. A database in
// WAL mode (attnsweep's) on a read-only mount cannot be read like that, as
// SQLite cannot create its -shm file there; when no -wal file exists all of
// it is in the database file, and it is read as immutable instead (exact).
#include <SQLiteCpp/SQLiteCpp.h>

#include <string>

namespace attnsweep::storage {

// Opens `path` read-only, or as immutable where the above applies. Throws
// BadInputError "PATH: ..." for a file that is missing or not a regular file
// (a FIFO would block the open); SQLite::Exception when SQLite cannot read it.
SQLite::Database open_for_reading(const std::string& path, int busy_timeout_ms = 10000);

// The "file:" URI that opens `path` as immutable (percent-encoding what a URI would read otherwise).
std::string immutable_uri(const std::string& path);
// Whether a read that failed with `sqlite_error_code` may be retried as immutable: SQLite could
// not open the -shm file (SQLITE_CANTOPEN) and no -wal file holds anything.
bool may_read_as_immutable(const std::string& path, int sqlite_error_code);

}  // namespace attnsweep::storage
