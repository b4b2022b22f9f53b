#include "storage/migrations.hpp"

#include <SQLiteCpp/SQLiteCpp.h>

#include <set>
#include <string>
#include <vector>

#include "schema_sql.hpp"
#include "storage/store.hpp"

namespace attnsweep::storage {
namespace {

std::vector<std::string> names_of(SQLite::Database& db, const std::string& sql) {
  SQLite::Statement query(db, sql);
  std::vector<std::string> names;
  while (query.executeStep()) names.push_back(query.getColumn(0).getString());
  return names;
}

std::vector<std::string> columns_of(SQLite::Database& db, const std::string& table) {
  return names_of(db, "SELECT name FROM pragma_table_info('" + table + "')");
}

}  // namespace

// Every version so far only added columns, tables or allowed values (CHECK
// constraints, which SQLite can only change by rebuilding a table). So one
// generic step serves every older version: set the old tables aside, create
// the current schema from schema.sql, copy the columns both have, drop the old
// tables. New columns must therefore be nullable or have a default. A future
// change of meaning would add a version-specific fix-up after the copy.
void migrate(SQLite::Database& db, int from_version) {
  (void)from_version;
  for (const auto& view : names_of(db, "SELECT name FROM sqlite_master WHERE type = 'view'")) {
    db.exec("DROP VIEW \"" + view + "\"");
  }
  for (const auto& index : names_of(db, "SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL")) {
    db.exec("DROP INDEX \"" + index + "\"");
  }
  // Keep foreign keys naming 'cases' and 'runs' as they are while tables are renamed away.
  db.exec("PRAGMA legacy_alter_table = ON");
  const auto tables = names_of(db, "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'");
  for (const auto& table : tables) db.exec("ALTER TABLE \"" + table + "\" RENAME TO \"" + table + "_old\"");
  db.exec(kSchemaSql);
  for (const auto& table : tables) {
    const auto now = columns_of(db, table);
    const std::set<std::string> current(now.begin(), now.end());
    std::string columns;
    for (const auto& column : columns_of(db, table + "_old")) {
      if (!current.count(column)) continue;  // a column no version dropped yet; kept out if one ever is
      columns += (columns.empty() ? "\"" : ", \"") + column + "\"";
    }
    db.exec("INSERT INTO \"" + table + "\" (" + columns + ") SELECT " + columns + " FROM \"" + table + "_old\"");
    db.exec("DROP TABLE \"" + table + "_old\"");
  }
  db.exec("PRAGMA legacy_alter_table = OFF");
}

}  // namespace attnsweep::storage
