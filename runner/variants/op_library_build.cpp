#include "runner/variants/op_library_build.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/common/sha256.hpp"

namespace attnsweep {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kDigits = 16;  // 64 bits: no two builds of a library share them by chance

// The SHA-256 of a file's bytes, read 1 MiB at a time (a wheel's .so is hundreds of MB);
// empty, with why, when it cannot be read.
std::string file_digest(const std::string& path, std::string& why) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    why = "cannot open " + path;
    return "";
  }
  Sha256 digest;
  std::vector<char> chunk(1 << 20);
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    digest.update(chunk.data(), static_cast<std::size_t>(in.gcount()));
  }
  if (in.bad()) {
    why = "cannot read " + path;
    return "";
  }
  return digest.hex();
}

}  // namespace

std::string library_fingerprint(const std::string& root, const std::vector<std::string>& files) {
  try {
    std::string why;
    if (files.size() == 1 && files.front() == root) {
      const std::string digest = file_digest(root, why);
      return digest.empty() ? "unreadable: " + why : digest.substr(0, kDigits);
    }
    if (files.empty()) return "unreadable: no shared object for " + root;
    std::vector<std::string> sorted = files;
    std::sort(sorted.begin(), sorted.end());
    std::ostringstream listing;  // name and digest of each, in name order
    for (const std::string& file : sorted) {
      const std::string digest = file_digest(file, why);
      if (digest.empty()) return "unreadable: " + why;
      // Lexically: a Hugging Face cache's files are links to blobs named by their own hash.
      listing << fs::path(file).lexically_relative(root).generic_string() << '\0' << digest << '\n';
    }
    return sha256_hex(listing.str()).substr(0, kDigits);
  } catch (const std::exception& error) {  // a fingerprint is a record, never a reason to stop the run
    return std::string("unreadable: ") + error.what();
  }
}

std::string op_library_builds(const std::map<std::string, std::string>& fingerprints) {
  if (fingerprints.empty()) return "";
  nlohmann::json builds = nlohmann::json::object();
  for (const auto& [name, fingerprint] : fingerprints) builds[name] = fingerprint;
  return builds.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace attnsweep
