#include "runner/variants/op_library_build.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <system_error>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/common/sha256.hpp"

namespace attnsweep {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kDigits = 16;  // 64 bits: no two builds of a library share them by chance

// The SHA-256 of a file's bytes; empty (with why) when it cannot be read.
std::string file_digest(const fs::path& path, std::string& why) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    why = "cannot open " + path.string();
    return "";
  }
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) {
    why = "cannot read " + path.string();
    return "";
  }
  return sha256_hex(bytes);
}

bool shared_object(const fs::path& path) { return path.filename().string().find(".so") != std::string::npos; }

}  // namespace

std::string library_fingerprint(const std::string& path) {
  std::error_code error;
  std::string why;
  if (fs::is_regular_file(path, error)) {
    const std::string digest = file_digest(path, why);
    return digest.empty() ? "unreadable: " + why : digest.substr(0, kDigits);
  }
  if (!fs::is_directory(path, error)) return "unreadable: " + path + " is no file or folder";
  std::vector<fs::path> objects;
  for (fs::recursive_directory_iterator it(path, error), end; !error && it != end; it.increment(error)) {
    if (it->is_regular_file(error) && shared_object(it->path())) objects.push_back(it->path());
  }
  if (error) return "unreadable: " + error.message();
  if (objects.empty()) return "unreadable: no shared object under " + path;
  std::sort(objects.begin(), objects.end());
  std::ostringstream listing;  // name and digest of each, in name order
  for (const fs::path& object : objects) {
    const std::string digest = file_digest(object, why);
    if (digest.empty()) return "unreadable: " + why;
    listing << fs::relative(object, path, error).generic_string() << '\0' << digest << '\n';
  }
  return sha256_hex(listing.str()).substr(0, kDigits);
}

std::string op_library_builds(const std::map<std::string, OpLibrarySpec>& libraries) {
  if (libraries.empty()) return "";
  nlohmann::json builds = nlohmann::json::object();
  for (const auto& [name, spec] : libraries) builds[name] = library_fingerprint(spec.library);
  return builds.dump();
}

}  // namespace attnsweep
