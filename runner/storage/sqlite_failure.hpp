#pragma once
// SQLite's own words for a failed write ("database is locked", "database or
// disk is full") name no file and say nothing of what to do. Here they become
// one line: the file, the reason, and what to do (issue 33, item 14).
#include <stdexcept>
#include <string>

namespace attnsweep::storage {

// A write to a results database failed: a lock held past the busy timeout, a
// full disk, an I/O error. A runtime failure (exit 1): the command's input was fine.
class DatabaseWriteError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// "PATH: database is locked: another process has held it for 10 s (a
// `sqlite3` shell, another attnsweep); close it and " + what_to_do;
// "PATH: database or disk is full: no space left where PATH is (or its
// quota); free space and " + what_to_do; other errors "PATH: " + SQLite's
// words (with the system's reason for an I/O error). `extended_code` is
// SQLite's extended result code, `system_errno` sqlite3_system_errno().
std::string describe_sqlite_failure(const std::string& path, int extended_code, const std::string& sqlite_message,
                                    int system_errno, const std::string& what_to_do = "run again");

}  // namespace attnsweep::storage
