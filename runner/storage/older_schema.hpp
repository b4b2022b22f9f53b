#pragma once
// Whether a file is an attnsweep database of an older schema, found by reading
// only: the question a reader asks after RunReader refused a file, to tell "an
// older attnsweep wrote this" (compare and nightly read it through a migrated
// copy; merge refuses it in its own words) from every other refusal.
#include <optional>
#include <string>

namespace attnsweep::storage {

// The schema version of the attnsweep database at `path` when it is older than
// kSchemaVersion (recognise_schema_version, read-only); nothing for a current or
// newer one, another program's database, or a file that is not one (or cannot be
// read: the caller has the reader's words for that).
std::optional<int> older_schema_version(const std::string& path);

}  // namespace attnsweep::storage
