#include "runner/storage/migrations.hpp"

#include <SQLiteCpp/SQLiteCpp.h>

#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "runner/common/errors.hpp"
#include "runner/storage/schema_version.hpp"
#include "schema_sql.hpp"

namespace attnsweep::storage {
namespace {

// The first version whose databases carry kApplicationId; older ones are
// recognised by their tables.
constexpr int kFirstVersionWithApplicationId = 5;

std::vector<std::string> names_of(SQLite::Database& db, const std::string& sql) {
  SQLite::Statement query(db, sql);
  std::vector<std::string> names;
  while (query.executeStep()) names.push_back(query.getColumn(0).getString());
  return names;
}

std::vector<std::string> columns_of(SQLite::Database& db, const std::string& table) {
  return names_of(db, "SELECT name FROM pragma_table_info('" + table + "')");
}

// The tables, and their columns, that every schema version from 1 on has had:
// what a database made before the application_id is recognised by.
struct TableOfEveryVersion {
  const char* name;
  std::vector<const char*> columns;
};
const std::vector<TableOfEveryVersion>& tables_of_every_version() {
  static const std::vector<TableOfEveryVersion> tables = {
      {"runs", {"run_id", "name", "config_yaml", "config_sha256", "status", "started_at", "device", "planned_cases"}},
      {"cases", {"case_id", "run_id", "plan_index", "variant", "dtype", "status", "flops", "finished_at"}},
      {"kernels", {"case_id", "name", "kind", "launches_per_forward", "total_us"}},
      {"ops", {"case_id", "name", "kind", "calls_per_forward", "self_cpu_us"}},
      {"samples", {"case_id", "sample_index", "gpu_time_us", "cpu_time_us"}},
  };
  return tables;
}

// "no table 'runs'", "no column cases.plan_index", or empty when every table
// and column of every version is there.
std::string missing_table_or_column(SQLite::Database& db) {
  for (const auto& table : tables_of_every_version()) {
    const auto have = columns_of(db, table.name);
    if (have.empty()) return std::string("no table '") + table.name + "'";
    const std::set<std::string> present(have.begin(), have.end());
    for (const char* column : table.columns) {
      if (!present.count(column)) return std::string("no column ") + table.name + "." + column;
    }
  }
  return "";
}

std::string hex(int value) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%08X", static_cast<unsigned>(value));
  return text;
}

// The names of the tables and views the current schema defines.
struct SchemaObjects {
  std::set<std::string> tables, views;
};
SchemaObjects objects_of_current_schema() {
  SQLite::Database memory(":memory:", SQLite::OPEN_READWRITE);
  memory.exec(kSchemaSql);
  const auto tables = names_of(memory, "SELECT name FROM sqlite_master WHERE type = 'table'");
  const auto views = names_of(memory, "SELECT name FROM sqlite_master WHERE type = 'view'");
  return {{tables.begin(), tables.end()}, {views.begin(), views.end()}};
}

}  // namespace

int recognise_schema_version(SQLite::Database& db, const std::string& path) {
  const int application_id = db.execAndGet("PRAGMA application_id").getInt();
  const int version = db.execAndGet("PRAGMA user_version").getInt();
  const int objects = db.execAndGet("SELECT count(*) FROM sqlite_master").getInt();
  const auto refuse = [&](const std::string& why) {
    throw BadInputError(path + ": is a SQLite database but not an attnsweep results database (" + why +
                        "); choose another --db");
  };
  if (application_id != 0 && application_id != kApplicationId) {
    refuse("its application_id " + hex(application_id) + " is another program's; attnsweep's is " +
           hex(kApplicationId));
  }
  if (version > kSchemaVersion) {
    throw BadInputError(path + ": database schema version " + std::to_string(version) +
                        " is newer than this attnsweep understands (" + std::to_string(kSchemaVersion) +
                        "); use a newer attnsweep or another --db");
  }
  if (version <= 0) {
    if (objects == 0 && version == 0) return 0;  // empty: a new database
    const int tables =
        db.execAndGet("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").getInt();
    refuse("user_version " + std::to_string(version) + " with " + std::to_string(tables) + " tables");
  }
  if (application_id == 0 && version >= kFirstVersionWithApplicationId) {
    refuse("user_version " + std::to_string(version) + " without attnsweep's application_id " + hex(kApplicationId));
  }
  const std::string missing = missing_table_or_column(db);
  if (!missing.empty()) refuse("user_version " + std::to_string(version) + " but " + missing);
  return version;
}

// Every version so far only added columns, tables or allowed values (CHECK
// constraints, which SQLite can only change by rebuilding a table). So one
// generic step serves every older version: set the schema's old tables aside,
// create the current schema from schema.sql, copy the columns both have, drop
// the old tables. New columns must therefore be nullable or have a default. A
// future change of meaning would add a version-specific fix-up after the copy.
// The application_id and user_version are the caller's to set afterwards.
void migrate(SQLite::Database& db, int from_version) {
  (void)from_version;
  const SchemaObjects schema = objects_of_current_schema();
  const auto tables_present = names_of(db, "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'");
  std::vector<std::string> tables;  // the schema's tables this database has; others are a user's own
  for (const auto& table : tables_present) {
    if (schema.tables.count(table)) tables.push_back(table);
  }
  for (const auto& view : names_of(db, "SELECT name FROM sqlite_master WHERE type = 'view'")) {
    if (schema.views.count(view)) db.exec("DROP VIEW \"" + view + "\"");
  }
  for (const auto& table : tables) {
    // Its indexes would keep their names on the renamed table and stop CREATE INDEX IF NOT EXISTS.
    SQLite::Statement indexes(db, "SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL AND tbl_name = ?");
    indexes.bind(1, table);
    std::vector<std::string> names;
    while (indexes.executeStep()) names.push_back(indexes.getColumn(0).getString());
    for (const auto& index : names) db.exec("DROP INDEX \"" + index + "\"");
  }
  // Keep foreign keys naming 'cases' and 'runs' as they are while tables are renamed away.
  db.exec("PRAGMA legacy_alter_table = ON");
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

int bring_schema_up_to_date(SQLite::Database& db, const std::string& path) {
  const int version = recognise_schema_version(db, path);
  if (version == kSchemaVersion) return version;
  if (version == 0) {
    db.exec(kSchemaSql);
  } else {
    migrate(db, version);
  }
  db.exec("PRAGMA application_id = " + std::to_string(kApplicationId));
  db.exec("PRAGMA user_version = " + std::to_string(kSchemaVersion));
  return version;
}

}  // namespace attnsweep::storage
