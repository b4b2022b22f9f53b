#include "runner/storage/trace_location.hpp"

#include <filesystem>

namespace attnsweep::storage {
namespace {

namespace fs = std::filesystem;

// Where a path really is: symbolic links followed (as far as the path exists),
// so that ".." steps out of the folder a link points at, as the system's does.
fs::path physical(const fs::path& path) {
  std::error_code error;
  const fs::path resolved = fs::weakly_canonical(fs::absolute(path), error);
  return error ? fs::absolute(path).lexically_normal() : resolved.lexically_normal();
}

fs::path folder_of(const std::string& db_path) { return physical(fs::absolute(db_path).parent_path()); }

}  // namespace

std::string trace_path_to_store(const std::string& db_path, const std::string& trace_file) {
  if (trace_file.empty()) return "";
  const fs::path named_folder = fs::absolute(db_path).lexically_normal().parent_path();
  const fs::path named = fs::absolute(trace_file).lexically_normal().lexically_relative(named_folder);
  // As named, unless a symbolic link to the database's folder would lead it
  // elsewhere from the folder the file is really in; then from that folder.
  const fs::path file = physical(trace_file);
  const fs::path relative =
      !named.empty() && physical(folder_of(db_path) / named) == file ? named : file.lexically_relative(folder_of(db_path));
  // lexically_relative is empty only when no relative path exists (another root).
  return relative.empty() ? file.string() : relative.string();
}

std::string trace_file_of(const std::string& db_path, const std::string& trace_path_base, const std::string& stored) {
  if (stored.empty()) return "";
  const fs::path path(stored);
  if (trace_path_base != kTraceBaseDatabase || path.is_absolute()) return stored;
  // Relative to the current directory when the database was named so, for
  // short paths in messages and links; but where the database was named
  // through a symbolic link to its folder, ".." leaves the folder linked to.
  const fs::path named = (fs::path(db_path).parent_path() / path).lexically_normal();
  const fs::path real = (folder_of(db_path) / path).lexically_normal();
  if (physical(named) == physical(real)) return named.string();
  // A path stored before links were followed (by the same link) holds from the name only.
  std::error_code error;
  return !fs::exists(real, error) && fs::exists(named, error) ? named.string() : real.string();
}

}  // namespace attnsweep::storage
