#pragma once
// A stored database changed as a hex editor or another tool could: the tests
// of what every reader refuses plant values that attnsweep never writes.
#include <SQLiteCpp/SQLiteCpp.h>

#include <string>

namespace attnsweep::testing {

// Runs `sql` on the database at `db_path` with the schema's CHECK constraints off.
inline void damage(const std::string& db_path, const std::string& sql) {
  SQLite::Database file(db_path, SQLite::OPEN_READWRITE);
  file.exec("PRAGMA ignore_check_constraints = ON");
  file.exec(sql);
}

}  // namespace attnsweep::testing
