#pragma once
// Forward migrations between schema versions, one function per step.
namespace SQLite {
class Database;
}

namespace attnsweep::storage {

// Brings a database at `from_version` (>= 1) to kSchemaVersion. Runs inside
// the caller's transaction, with foreign keys off.
void migrate(SQLite::Database& db, int from_version);

}  // namespace attnsweep::storage
