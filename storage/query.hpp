#pragma once
// `attnsweep query`: one SQL statement against a results database opened
// read-only, so user SQL can never change stored results. The rows come back
// as typed values; printing them is the output layer's (runner/report).
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace attnsweep::storage {

// NULL, INTEGER, REAL, or TEXT (BLOBs as their bytes).
using QueryValue = std::variant<std::monostate, std::int64_t, double, std::string>;

struct QueryResult {
  std::vector<std::string> columns;
  std::vector<std::vector<QueryValue>> rows;
};

// Throws BadInputError for a missing database, bad SQL, or any attempt to write.
QueryResult run_query(const std::string& db_path, const std::string& sql);

}  // namespace attnsweep::storage
