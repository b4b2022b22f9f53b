#include "runner/storage/database_files.hpp"

#include <filesystem>
#include <system_error>

#include "runner/common/errors.hpp"

namespace attnsweep::storage {

void refuse_side_file_name(const std::string& path) {
  for (const std::string suffix : kSideFileSuffixes) {
    if (path.size() <= suffix.size() || path.compare(path.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
    const std::string database = path.substr(0, path.size() - suffix.size());
    throw BadInputError(path + ": is named like SQLite's " + suffix + " file of " + database + ", which the next "
                        "writer of " + database + " would replay or delete; a database must not end in -wal, -shm "
                        "or -journal: give another name");
  }
}

void remove_database_files(const std::string& path) {
  std::error_code ignored;
  std::filesystem::remove(path, ignored);
  for (const std::string suffix : kSideFileSuffixes) std::filesystem::remove(path + suffix, ignored);
}

}  // namespace attnsweep::storage
