#include "runner/execute/op_library_watch.hpp"

#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include <stdexcept>

#include "runner/variants/op_library.hpp"
#include "runner/variants/op_library_build.hpp"

namespace attnsweep::execute {

OpLibraryWatch::FileIdentity OpLibraryWatch::identity_of(const std::string& file) {
  struct stat info {};
  if (::stat(file.c_str(), &info) != 0) return {};  // gone: an identity no file has
  return {info.st_dev, info.st_ino, info.st_size,
          static_cast<long long>(info.st_mtim.tv_sec) * 1000000000LL + info.st_mtim.tv_nsec};
}

OpLibraryWatch::OpLibraryWatch(const std::map<std::string, OpLibrarySpec>& libraries) {
  for (const auto& [name, spec] : libraries) {
    Watched watched{spec, {}, {}};
    try {
      watched.files = op_library_files(spec);
    } catch (const std::exception&) {
      // Unreadable now: the loader refused it already, or will.
    }
    for (const std::string& file : watched.files) watched.identities.push_back(identity_of(file));
    libraries_.emplace(name, std::move(watched));
  }
}

void OpLibraryWatch::expect(const std::string& builds) {
  expected_.clear();
  if (builds.empty()) return;
  const auto json = nlohmann::json::parse(builds, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) return;
  for (const auto& [name, fingerprint] : json.items()) {
    if (fingerprint.is_string()) expected_[name] = fingerprint.get<std::string>();
  }
}

void OpLibraryWatch::check() {
  for (auto& [name, watched] : libraries_) {
    const auto expected = expected_.find(name);
    if (expected == expected_.end()) continue;
    bool moved = false;
    for (std::size_t i = 0; i < watched.files.size(); ++i) moved = moved || identity_of(watched.files[i]) != watched.identities[i];
    if (!moved) continue;
    // A hub folder may now pick another build folder: ask the loader's rule again.
    std::vector<std::string> files = watched.files;
    try {
      files = op_library_files(watched.spec);
    } catch (const std::exception&) {
    }
    const std::string now = library_fingerprint(watched.spec.library, files);
    if (now != expected->second) {
      throw std::runtime_error("op library " + name + " was rebuilt or replaced during the run (build " + expected->second +
                               ", now " + now + " at " + watched.spec.library +
                               "): the next cases would measure another kernel under the run's build, so the run "
                               "stops here with the cases measured so far stored; put the run's build back and "
                               "--resume, or start a new run");
    }
    // Touched, not rebuilt: the same bytes; watch the new identities.
    watched.files = files;
    watched.identities.clear();
    for (const std::string& file : files) watched.identities.push_back(identity_of(file));
  }
}

}  // namespace attnsweep::execute
