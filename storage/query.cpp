#include "storage/query.hpp"

#include <SQLiteCpp/SQLiteCpp.h>
#include <sys/stat.h>

#include <algorithm>
#include <vector>

#include "runner/common/errors.hpp"

namespace attnsweep::storage {

void print_query(const std::string& db_path, const std::string& sql, std::ostream& out) {
  struct stat info {};
  if (stat(db_path.c_str(), &info) != 0) throw BadInputError(db_path + ": database not found");
  try {
    SQLite::Database db(db_path, SQLite::OPEN_READONLY, /*busy_timeout_ms=*/10000);
    SQLite::Statement statement(db, sql);
    std::vector<std::string> header;
    for (int i = 0; i < statement.getColumnCount(); ++i) header.push_back(statement.getColumnName(i));
    std::vector<std::vector<std::string>> rows;
    while (statement.executeStep()) {
      std::vector<std::string> row;
      for (int i = 0; i < statement.getColumnCount(); ++i) {
        const SQLite::Column column = statement.getColumn(i);
        row.push_back(column.isNull() ? "NULL" : column.getString());
      }
      rows.push_back(std::move(row));
    }
    std::vector<std::size_t> widths(header.size());
    for (std::size_t i = 0; i < header.size(); ++i) {
      widths[i] = header[i].size();
      for (const auto& row : rows) widths[i] = std::max(widths[i], std::min<std::size_t>(row[i].size(), 80));
    }
    auto print_row = [&](const std::vector<std::string>& row) {
      for (std::size_t i = 0; i < row.size(); ++i) {
        std::string cell = row[i].size() > 80 ? row[i].substr(0, 77) + "..." : row[i];
        out << cell << (i + 1 < row.size() ? std::string(widths[i] - cell.size() + 2, ' ') : "\n");
      }
    };
    if (!header.empty()) print_row(header);
    for (const auto& row : rows) print_row(row);
  } catch (const SQLite::Exception& error) {
    throw BadInputError(db_path + ": query failed: " + error.what() +
                        " (the database is opened read-only; use SELECT)");
  }
}

}  // namespace attnsweep::storage
