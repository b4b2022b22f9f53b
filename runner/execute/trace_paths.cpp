#include "runner/execute/trace_paths.hpp"

#include <cctype>
#include <filesystem>
#include <system_error>

#include "runner/common/errors.hpp"

namespace attnsweep::execute {
namespace {

namespace fs = std::filesystem;

std::string safe_file_name(std::string text) {
  for (char& ch : text) {
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '-' && ch != '_' && ch != '.') ch = '_';
  }
  return text;
}

}  // namespace

std::string trace_directory(const std::string& traces_option, bool traces_in_config, const std::string& db_path) {
  if (!traces_option.empty()) return traces_option;
  if (!traces_in_config) return "";
  const fs::path db(db_path);
  return (db.parent_path() / (db.stem().string() + "-traces")).string();
}

void create_trace_directory(const std::string& directory) {
  std::error_code error;
  fs::create_directories(directory, error);
  if (error) throw BadInputError(directory + ": cannot create the trace directory: " + error.message());
}

std::string trace_file(const std::string& directory, std::int64_t run_id, const Case& c) {
  if (directory.empty()) return "";
  return (fs::path(directory) / safe_file_name("run" + std::to_string(run_id) + "-" + std::to_string(c.plan_index) +
                                                "-" + c.variant + "-" + c.shape.label() + "-" + to_string(c.dtype) +
                                                ".json"))
      .string();
}

}  // namespace attnsweep::execute
