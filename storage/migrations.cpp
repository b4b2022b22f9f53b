#include "storage/migrations.hpp"

#include <SQLiteCpp/SQLiteCpp.h>

#include <string>

#include "schema_sql.hpp"
#include "storage/store.hpp"

namespace attnsweep::storage {
namespace {

// v1 -> v2: cases.status gains 'crashed' and 'timeout' (a CHECK constraint,
// which SQLite can only change by rebuilding the table); runs gains isolate
// and case_timeout_s. The new cases table comes from schema.sql itself, so
// the migrated and the fresh schema cannot drift apart.
void migrate_1_to_2(SQLite::Database& db) {
  db.exec("ALTER TABLE runs ADD COLUMN isolate INTEGER NOT NULL DEFAULT 0");
  db.exec("ALTER TABLE runs ADD COLUMN case_timeout_s REAL");
  db.exec("DROP VIEW IF EXISTS results");
  db.exec("DROP INDEX IF EXISTS cases_by_run");
  // Keep kernels/ops/samples pointing at the name 'cases' while it is renamed away.
  db.exec("PRAGMA legacy_alter_table = ON");
  db.exec("ALTER TABLE cases RENAME TO cases_v1");
  db.exec(kSchemaSql);
  db.exec("INSERT INTO cases SELECT * FROM cases_v1");
  db.exec("DROP TABLE cases_v1");
  db.exec("PRAGMA legacy_alter_table = OFF");
}

}  // namespace

void migrate(SQLite::Database& db, int from_version) {
  using Step = void (*)(SQLite::Database&);
  static const Step steps[] = {nullptr, migrate_1_to_2};  // steps[v] goes from v to v + 1
  static_assert(sizeof steps / sizeof steps[0] == kSchemaVersion, "one migration per version step");
  for (int version = from_version; version < kSchemaVersion; ++version) steps[version](db);
}

}  // namespace attnsweep::storage
