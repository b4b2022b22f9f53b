#include "runner/storage/readable_database.hpp"

#include <stdlib.h>

#include <filesystem>
#include <vector>

#include "runner/common/errors.hpp"
#include "runner/common/temp_folder.hpp"
#include "runner/storage/older_schema.hpp"
#include "runner/storage/store.hpp"

namespace attnsweep::storage {
namespace {

// Removes a folder that holds only files (the copy and SQLite's -wal and -shm
// beside it). Not std::filesystem::remove_all: libtorch.so, linked into the
// binary, exports its own build of it, which crashed (runner/jobs/collect.cpp).
void remove_flat_folder(const std::string& folder) {
  std::error_code ignored;
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(folder, ignored)) files.push_back(entry.path());
  for (const auto& file : files) std::filesystem::remove(file, ignored);
  std::filesystem::remove(folder, ignored);
}

}  // namespace

ReadableDatabase::ReadableDatabase(const std::string& path) : path_(path) {
  try {
    reader_.emplace(path);
    return;
  } catch (const BadInputError&) {
    const std::optional<int> version = older_schema_version(path);
    if (!version) throw;
    // An attnsweep database of an older schema: migrate a copy, never the file.
    std::string folder = (std::filesystem::path(temp_folder()) / "attnsweep-compare-XXXXXX").string();
    if (!mkdtemp(folder.data())) throw;
    copy_folder_ = folder;
    const std::string copy = folder + "/" + std::filesystem::path(path).filename().string();
    try {
      snapshot_database(path, copy);  // a consistent copy, WAL contents included
      // Migrated at the open (Open::existing would wait for a first write).
      { const Store migrated(copy, Store::Open::create_if_absent); }
      reader_.emplace(copy);
    } catch (const std::exception& error) {
      remove_flat_folder(copy_folder_);
      throw BadInputError(path + ": database schema version " + std::to_string(*version) +
                          " (this attnsweep reads " + std::to_string(kSchemaVersion) +
                          "), and a migrated copy could not be made: " + error.what());
    }
    migrated_from_ = *version;
  }
}

std::string without_db_advice(std::string message) {
  for (const std::string advice : {"; choose another --db", " or another --db"}) {
    if (message.size() > advice.size() && message.compare(message.size() - advice.size(), advice.size(), advice) == 0) {
      message.erase(message.size() - advice.size());
    }
  }
  return message;
}

std::unique_ptr<ReadableDatabase> open_readable(const std::string& path, const std::string& name) {
  try {
    return std::make_unique<ReadableDatabase>(path);
  } catch (const BadInputError& error) {
    const std::string message = without_db_advice(error.what());
    throw BadInputError(name.empty() ? message : name + ": " + message);
  }
}

ReadableDatabase::~ReadableDatabase() {
  reader_.reset();  // closed before its files are removed
  if (!copy_folder_.empty()) remove_flat_folder(copy_folder_);
}

}  // namespace attnsweep::storage
