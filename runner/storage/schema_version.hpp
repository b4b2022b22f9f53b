#pragma once
// Which schema this attnsweep writes and reads (runner/storage/schema.sql):
// its own header, so that the migrations and every reader name the version
// without including the store. A new column is a line in schema.sql and a new
// number here (docs/schema.md, "Versions").
namespace attnsweep::storage {

inline constexpr int kSchemaVersion = 22;
// PRAGMA application_id of every attnsweep database since version 5 ('attn'):
// what tells one apart from any other SQLite file before anything is written.
inline constexpr int kApplicationId = 0x6174746E;

}  // namespace attnsweep::storage
