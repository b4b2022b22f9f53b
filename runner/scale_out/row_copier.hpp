#pragma once
// Copying rows between two databases of this schema version, column by column
// as the output's table has them: how a merge moves a shard's run, cases,
// kernels, ops and samples into the merged run. Internal to runner/scale_out/.
#include <SQLiteCpp/SQLiteCpp.h>

#include <algorithm>
#include <string>
#include <vector>

#include "runner/storage/fields.hpp"

namespace attnsweep::scale_out {

using storage::Value;
namespace fields = storage::fields;

// The stored value of a column (NULL, INTEGER, REAL or TEXT).
Value value_of(const SQLite::Column& column);
// The first column of every row `sql` selects with its one parameter `argument`.
std::vector<std::string> names_of(SQLite::Database& db, const std::string& sql, const std::string& argument);
// A table's columns in their order.
std::vector<std::string> columns_of(SQLite::Database& db, const std::string& table);
// The tables whose rows belong to a case (a foreign key to cases).
std::vector<std::string> tables_of_a_case(SQLite::Database& db);
// "\"a\", \"b\"" and "?, ?": a column list and its placeholders.
std::string column_list(const std::vector<std::string>& columns);
std::string placeholders(std::size_t count);


// Copies rows of one table from an input to the output: every column of the
// table but `left_out` (a key the output assigns), the `replaced` columns
// given new values per call.
class RowCopier {
 public:
  RowCopier(SQLite::Database& from, SQLite::Database& to, const std::string& table, const std::string& selected_by,
            const std::vector<std::string>& replaced, const std::string& left_out = "", const std::string& verb = "INSERT")
      : columns_(without(columns_of(to, table), left_out)),
        // By rowid: kernels and ops keep the order they were stored in only so (RunReader reads them by it).
        select_(from, "SELECT " + column_list(columns_) + " FROM \"" + table + "\" WHERE \"" + selected_by +
                          "\" = ? ORDER BY rowid"),
        insert_(to, verb + " INTO \"" + table + "\" (" + column_list(columns_) + ") VALUES (" +
                        placeholders(columns_.size()) + ")") {
    for (const auto& column : columns_) {
      const auto at = std::find(replaced.begin(), replaced.end(), column);
      replacement_of_.push_back(at == replaced.end() ? -1 : static_cast<int>(at - replaced.begin()));
    }
  }

  // Copies the rows whose `selected_by` is `key`, `replacements` in `replaced`
  // order; returns how many rows were inserted (fewer with INSERT OR IGNORE).
  int copy(std::int64_t key, const std::vector<Value>& replacements) {
    select_.reset();
    select_.bind(1, key);
    int inserted = 0;
    while (select_.executeStep()) {
      for (std::size_t i = 0; i < columns_.size(); ++i) {
        const int replacement = replacement_of_[i];
        const Value value = replacement < 0 ? value_of(select_.getColumn(static_cast<int>(i)))
                                            : replacements.at(static_cast<std::size_t>(replacement));
        fields::bind_value(insert_, static_cast<int>(i) + 1, value);
      }
      inserted += insert_.exec();
      insert_.reset();
    }
    return inserted;
  }

 private:
  static std::vector<std::string> without(std::vector<std::string> columns, const std::string& column) {
    columns.erase(std::remove(columns.begin(), columns.end(), column), columns.end());
    return columns;
  }

  std::vector<std::string> columns_;
  SQLite::Statement select_, insert_;
  std::vector<int> replacement_of_;  // per column: its index in the replacements, or -1 to copy it
};

}  // namespace attnsweep::scale_out
