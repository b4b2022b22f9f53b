#include "runner/scale_out/row_copier.hpp"

namespace attnsweep::scale_out {

Value value_of(const SQLite::Column& column) {
  if (column.isNull()) return {};
  if (column.isInteger()) return static_cast<std::int64_t>(column.getInt64());
  if (column.isFloat()) return column.getDouble();
  return column.getString();  // TEXT; the schema has no BLOBs
}

std::vector<std::string> names_of(SQLite::Database& db, const std::string& sql, const std::string& argument) {
  SQLite::Statement query(db, sql);
  query.bind(1, argument);
  std::vector<std::string> names;
  while (query.executeStep()) names.push_back(query.getColumn(0).getString());
  return names;
}

// The columns of a table, from the schema itself: a column added later is carried over.
std::vector<std::string> columns_of(SQLite::Database& db, const std::string& table) {
  return names_of(db, "SELECT name FROM pragma_table_info(?) ORDER BY cid", table);
}

// The tables whose rows belong to one case (kernels, ops, samples, and any added later).
std::vector<std::string> tables_of_a_case(SQLite::Database& db) {
  return names_of(db, "SELECT m.name FROM sqlite_master m, pragma_foreign_key_list(m.name) f "
                      "WHERE m.type = 'table' AND f.\"table\" = ? AND f.\"from\" = 'case_id' ORDER BY m.name", "cases");
}

std::string column_list(const std::vector<std::string>& columns) {
  std::string list;
  for (const auto& column : columns) list += (list.empty() ? "\"" : ", \"") + column + "\"";
  return list;
}

std::string placeholders(std::size_t count) {
  std::string text;
  for (std::size_t i = 0; i < count; ++i) text += i ? ", ?" : "?";
  return text;
}

}  // namespace attnsweep::scale_out
