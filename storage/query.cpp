#include "storage/query.hpp"

#include <SQLiteCpp/SQLiteCpp.h>
#include <sys/stat.h>

#include "runner/common/errors.hpp"

namespace attnsweep::storage {

QueryResult run_query(const std::string& db_path, const std::string& sql) {
  struct stat info {};
  if (stat(db_path.c_str(), &info) != 0) throw BadInputError(db_path + ": database not found");
  try {
    SQLite::Database db(db_path, SQLite::OPEN_READONLY, /*busy_timeout_ms=*/10000);
    SQLite::Statement statement(db, sql);
    QueryResult result;
    for (int i = 0; i < statement.getColumnCount(); ++i) result.columns.push_back(statement.getColumnName(i));
    while (statement.executeStep()) {
      std::vector<QueryValue> row;
      for (int i = 0; i < statement.getColumnCount(); ++i) {
        const SQLite::Column column = statement.getColumn(i);
        if (column.isNull()) {
          row.emplace_back(std::monostate{});
        } else if (column.isInteger()) {
          row.emplace_back(column.getInt64());
        } else if (column.isFloat()) {
          row.emplace_back(column.getDouble());
        } else {
          row.emplace_back(column.getString());
        }
      }
      result.rows.push_back(std::move(row));
    }
    return result;
  } catch (const SQLite::Exception& error) {
    throw BadInputError(db_path + ": query failed: " + error.what() +
                        " (the database is opened read-only; use SELECT)");
  }
}

}  // namespace attnsweep::storage
