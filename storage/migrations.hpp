#pragma once
// Forward migration of an older database to the current schema (storage/schema.sql).
namespace SQLite {
class Database;
}

namespace attnsweep::storage {

// Brings a database at `from_version` (>= 1) to kSchemaVersion. Runs inside
// the caller's transaction, with foreign keys off.
void migrate(SQLite::Database& db, int from_version);

}  // namespace attnsweep::storage
