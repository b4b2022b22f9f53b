#pragma once
// Schema versions: recognising an attnsweep database by reading it only, and
// migrating an older one forward to the current schema (runner/storage/schema.sql).
#include <string>

namespace SQLite {
class Database;
}

namespace attnsweep::storage {

// The schema version of the database open in `db`, found by reading only: 0
// for an empty database (no schema objects: a new one), else the user_version
// of an attnsweep database. An attnsweep database carries kApplicationId
// (version 5 on) or, made before it existed (application_id 0), user_version
// 1 to 4 and the tables every version had. Throws BadInputError "<path>: ..."
// for another program's database, a newer attnsweep's, or one whose tables are
// missing. Call it inside one read transaction, for one snapshot.
int recognise_schema_version(SQLite::Database& db, const std::string& path);

// Brings a database at `from_version` (>= 1) to kSchemaVersion. Runs inside
// the caller's transaction, with foreign keys off. Tables, views and indexes
// that are not the schema's (a user's own) are left as they are.
void migrate(SQLite::Database& db, int from_version);

// Inside the caller's write transaction (BEGIN IMMEDIATE, foreign keys off):
// recognises the database again (another process may have created or
// migrated it since it was inspected), creates the schema in an empty one or
// migrates an older one, and stamps kApplicationId and kSchemaVersion. A
// rollback of that transaction leaves the file as it was. Returns the version
// it found. Throws BadInputError as recognise_schema_version does.
int bring_schema_up_to_date(SQLite::Database& db, const std::string& path);

}  // namespace attnsweep::storage
