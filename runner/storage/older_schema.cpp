#include "runner/storage/older_schema.hpp"

#include <exception>

#include "runner/storage/migrations.hpp"
#include "runner/storage/open_for_reading.hpp"
#include "runner/storage/schema_version.hpp"

namespace attnsweep::storage {

std::optional<int> older_schema_version(const std::string& path) {
  try {
    SQLite::Database db = open_for_reading(path);  // never a FIFO: that open would block
    const int version = recognise_schema_version(db, path);
    if (version >= 1 && version < kSchemaVersion) return version;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

}  // namespace attnsweep::storage
