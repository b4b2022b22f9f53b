#include "runner/storage/sqlite_failure.hpp"

#include <sqlite3.h>

#include <cerrno>
#include <cstring>

namespace attnsweep::storage {

// The busy timeout of every connection that writes (store.cpp, merge.cpp).
constexpr int kBusyTimeoutSeconds = 10;

std::string describe_sqlite_failure(const std::string& path, int extended_code, const std::string& sqlite_message,
                                    int system_errno, const std::string& what_to_do) {
  const int primary = extended_code & 0xff;
  if (primary == SQLITE_BUSY || primary == SQLITE_LOCKED) {
    return path + ": database is locked: another process has held it for " + std::to_string(kBusyTimeoutSeconds) +
           " s (a `sqlite3` shell, another attnsweep); close it and " + what_to_do;
  }
  if (primary == SQLITE_FULL || (primary == SQLITE_IOERR && (system_errno == ENOSPC || system_errno == EDQUOT))) {
    return path + ": database or disk is full: no space left on the disk " + path + " is on (or over its quota); "
           "free space and " + what_to_do;
  }
  if (primary == SQLITE_IOERR && system_errno != 0) {
    return path + ": " + sqlite_message + " (" + std::strerror(system_errno) + "); " + what_to_do + " once it is fixed";
  }
  return path + ": " + sqlite_message;
}

}  // namespace attnsweep::storage
