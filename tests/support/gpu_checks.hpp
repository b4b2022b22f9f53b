#pragma once
// What the GPU tests that drive the binary share: whether the binary sees a
// CUDA device (they skip cleanly where none is), and one value of a query on
// the database a run wrote.
#include <SQLiteCpp/SQLiteCpp.h>

#include <string>

#include "tests/support/run_attnsweep.hpp"

namespace attnsweep::testing {

inline bool binary_sees_cuda() {
  return run_attnsweep("variants").output.find("(0 CUDA device(s) visible)") == std::string::npos;
}

// The first column of the first row as text; "NULL" for no row or a NULL.
inline std::string scalar(const std::string& db, const std::string& sql) {
  SQLite::Database database(db, SQLite::OPEN_READONLY);
  SQLite::Statement query(database, sql);
  return query.executeStep() && !query.getColumn(0).isNull() ? query.getColumn(0).getString() : "NULL";
}

}  // namespace attnsweep::testing
