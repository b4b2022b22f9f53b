#pragma once
// A run cut short, made from a finished one in its database: what the tests of
// --resume and of the report's missing cases start from, as if the sweep had
// been stopped before it stored some of its cases.
#include <SQLiteCpp/SQLiteCpp.h>

#include <string>

namespace attnsweep::testing {

// Removes the cases that `which` selects (an SQL condition on `cases`) with
// their samples, kernels and ops, and gives every run of `db_path` the status
// `run_status` ("interrupted", "running").
inline void cut_run_short(const std::string& db_path, const std::string& which, const std::string& run_status) {
  SQLite::Database db(db_path, SQLite::OPEN_READWRITE);
  for (const std::string table : {"samples", "kernels", "ops"}) {
    db.exec("DELETE FROM " + table + " WHERE case_id IN (SELECT case_id FROM cases WHERE " + which + ")");
  }
  db.exec("DELETE FROM cases WHERE " + which);
  db.exec("UPDATE runs SET status = '" + run_status + "'");
}

}  // namespace attnsweep::testing
