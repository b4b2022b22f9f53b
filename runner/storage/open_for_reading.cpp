#include "runner/storage/open_for_reading.hpp"

#include <sqlite3.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "runner/common/errors.hpp"
#include "runner/common/file_kind.hpp"

namespace attnsweep::storage {

std::string immutable_uri(const std::string& path) {
  std::string uri = "file:";
  for (const char c : path) {
    if (c == '%' || c == '?' || c == '#') {
      char escaped[4];
      std::snprintf(escaped, sizeof escaped, "%%%02X", static_cast<unsigned char>(c));
      uri += escaped;
    } else {
      uri += c;
    }
  }
  return uri + "?immutable=1";
}

bool may_read_as_immutable(const std::string& path, int sqlite_error_code) {
  struct stat wal {};
  return (sqlite_error_code & 0xff) == SQLITE_CANTOPEN && ::stat((path + "-wal").c_str(), &wal) != 0;
}

SQLite::Database open_for_reading(const std::string& path, int busy_timeout_ms) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    throw BadInputError(path + ": " + (errno == ENOENT ? std::string("database not found") : std::strerror(errno)));
  }
  if (!S_ISREG(info.st_mode)) {
    throw BadInputError(path + ": is " + file_kind(info.st_mode) + ", not a regular file, so not a results database");
  }
  SQLite::Database db(path, SQLite::OPEN_READONLY, busy_timeout_ms);
  try {
    db.execAndGet("PRAGMA schema_version");  // the first read: where a missing -shm shows
    return db;
  } catch (const SQLite::Exception& error) {
    if (!may_read_as_immutable(path, error.getExtendedErrorCode())) throw;
  }
  return SQLite::Database(immutable_uri(path), SQLite::OPEN_READONLY | SQLite::OPEN_URI, busy_timeout_ms);
}

}  // namespace attnsweep::storage
