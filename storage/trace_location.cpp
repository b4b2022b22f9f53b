#include "storage/trace_location.hpp"

#include <filesystem>

namespace attnsweep::storage {
namespace {

namespace fs = std::filesystem;

fs::path folder_of(const std::string& db_path) { return fs::absolute(db_path).lexically_normal().parent_path(); }

}  // namespace

std::string trace_path_to_store(const std::string& db_path, const std::string& trace_file) {
  if (trace_file.empty()) return "";
  const fs::path relative = fs::absolute(trace_file).lexically_normal().lexically_relative(folder_of(db_path));
  // lexically_relative is empty only when no relative path exists (another root).
  return relative.empty() ? fs::absolute(trace_file).lexically_normal().string() : relative.string();
}

std::string trace_file_of(const std::string& db_path, const std::string& trace_path_base, const std::string& stored) {
  if (stored.empty()) return "";
  const fs::path path(stored);
  if (trace_path_base != kTraceBaseDatabase || path.is_absolute()) return stored;
  // Relative to the current directory when the database was named so, for short paths in messages and links.
  const fs::path folder = fs::path(db_path).parent_path();
  return (folder / path).lexically_normal().string();
}

}  // namespace attnsweep::storage
