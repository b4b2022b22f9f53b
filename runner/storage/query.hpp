#pragma once
// `attnsweep query`: one read-only SQL statement against a results database,
// so user SQL can never change stored results. Rows are handed over one at a
// time as SQLite steps through them (nothing is buffered: a result of any size
// streams); printing them is the output layer's (runner/report).
#include <cstdint>
#include <functional>
#include <string>
#include <variant>
#include <vector>

namespace attnsweep::storage {

// NULL, INTEGER, REAL, or TEXT (BLOBs as their bytes).
using QueryValue = std::variant<std::monostate, std::int64_t, double, std::string>;

// Calls on_columns once with the column names, then on_row for every row.
// Throws BadInputError for a missing or non-regular file, SQL that is empty,
// more than one statement, or anything but reading (writes, ATTACH, VACUUM,
// PRAGMAs that set), and for SQL errors. A WAL database on read-only media is
// read as immutable when it has no -wal file (then all of it is in the file).
void run_query(const std::string& db_path, const std::string& sql,
               const std::function<void(const std::vector<std::string>&)>& on_columns,
               const std::function<void(const std::vector<QueryValue>&)>& on_row);

}  // namespace attnsweep::storage
