#pragma once
// A results database opened for reading: what compare, report --compare,
// nightly and history read through. A file of an older attnsweep schema is
// read through a migrated copy in a temporary folder, so a baseline pinned
// before an upgrade still compares; the file itself is never changed
// (migrating it in place would take a run written into it).
#include <memory>
#include <optional>
#include <string>

#include "runner/storage/run_reader.hpp"

namespace attnsweep::storage {

// Throws BadInputError as RunReader does, or when the migrated copy
// of an older database cannot be made. The copy is removed with this object.
class ReadableDatabase {
 public:
  explicit ReadableDatabase(const std::string& path);
  ~ReadableDatabase();
  ReadableDatabase(const ReadableDatabase&) = delete;
  ReadableDatabase& operator=(const ReadableDatabase&) = delete;

  // Reads the copy when one was made: its path() is the copy's.
  const RunReader& reader() const { return *reader_; }
  const std::string& path() const { return path_; }  // the file as given
  std::optional<int> migrated_from() const { return migrated_from_; }  // the file's older schema version

 private:
  std::string path_, copy_folder_;
  std::optional<int> migrated_from_;
  std::optional<RunReader> reader_;
};

// A refusal of the reader without its advice for `run --db` ("; choose another
// --db"), which does not apply to a database that is only read.
std::string without_db_advice(std::string message);

// Opens `path` as a ReadableDatabase. A refusal is BadInputError "NAME: why"
// (just "why" when `name` is empty), without the advice for `run --db`.
std::unique_ptr<ReadableDatabase> open_readable(const std::string& path, const std::string& name);

}  // namespace attnsweep::storage
