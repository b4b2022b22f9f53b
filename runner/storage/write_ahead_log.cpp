#include "runner/storage/write_ahead_log.hpp"

#include <SQLiteCpp/SQLiteCpp.h>

namespace attnsweep::storage {

bool fold_write_ahead_log(const std::string& path) {
  try {
    SQLite::Database database(path, SQLite::OPEN_READWRITE, 10000);
    // A read opens the log; closing this connection, the last, folds and removes it.
    database.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    return true;
  } catch (const SQLite::Exception&) {
    return false;
  }
}

}  // namespace attnsweep::storage
