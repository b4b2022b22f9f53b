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

std::vector<std::string> OpLibraryWatch::files_of(const OpLibrarySpec& spec) {
  try {
    return op_library_files(spec);  // the loader's own choice: a hub folder may pick a new build folder
  } catch (const std::exception&) {
    return {};  // unreadable now: hashed below as "unreadable", another build than the run's
  }
}

OpLibraryWatch::OpLibraryWatch(const std::map<std::string, OpLibrarySpec>& libraries) {
  for (const auto& [name, spec] : libraries) {
    Watched watched{spec, files_of(spec), {}};
    for (const std::string& file : watched.files) watched.identities.push_back(identity_of(file));
    libraries_.emplace(name, std::move(watched));
  }
}

OpLibraryWatch::OpLibraryWatch(const std::map<std::string, OpLibrarySpec>& libraries, const std::string& identities) {
  const auto json = nlohmann::json::parse(identities, nullptr, /*allow_exceptions=*/false);
  for (const auto& [name, spec] : libraries) {
    Watched watched{spec, {}, {}};
    if (json.is_object() && json.contains(name)) {
      for (const auto& file : json[name]) {
        watched.files.push_back(file.value("file", ""));
        watched.identities.push_back({static_cast<dev_t>(file.value("device", 0ULL)),
                                      static_cast<ino_t>(file.value("inode", 0ULL)),
                                      static_cast<off_t>(file.value("size", -1LL)), file.value("modified_ns", -1LL)});
      }
    }
    libraries_.emplace(name, std::move(watched));
  }
}

std::string OpLibraryWatch::identities() const {
  nlohmann::json json = nlohmann::json::object();
  for (const auto& [name, watched] : libraries_) {
    nlohmann::json files = nlohmann::json::array();
    for (std::size_t i = 0; i < watched.files.size(); ++i) {
      const FileIdentity& id = watched.identities[i];
      files.push_back({{"file", watched.files[i]},
                       {"device", static_cast<unsigned long long>(id.device)},
                       {"inode", static_cast<unsigned long long>(id.inode)},
                       {"size", static_cast<long long>(id.size)},
                       {"modified_ns", id.modified_ns}});
    }
    json[name] = files;
  }
  return json.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void OpLibraryWatch::expect(const std::string& builds) {
  expected_.clear();
  if (builds.empty()) return;  // a run before schema 22: its builds are not known
  const auto json = nlohmann::json::parse(builds, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) return;  // the readers refuse a damaged runs row before this
  for (const auto& [name, fingerprint] : json.items()) {
    if (fingerprint.is_string()) expected_[name] = fingerprint.get<std::string>();
  }
}

void OpLibraryWatch::check() {
  for (auto& [name, watched] : libraries_) {
    const auto expected = expected_.find(name);
    if (expected == expected_.end()) continue;
    // The list is made again every time: a new build folder of a hub kernel or
    // a new .so in a wheel's folder moves no known file.
    std::vector<std::string> files = files_of(watched.spec);
    bool moved = files != watched.files;
    for (std::size_t i = 0; !moved && i < files.size(); ++i) moved = identity_of(files[i]) != watched.identities[i];
    if (!moved) continue;
    std::vector<FileIdentity> identities;
    for (const std::string& file : files) identities.push_back(identity_of(file));
    const std::string now = library_fingerprint(watched.spec.library, files);
    if (now != expected->second) {
      throw std::runtime_error("op library " + name + " was rebuilt or replaced during the run (build " + expected->second +
                               ", now " + now + " at " + watched.spec.library +
                               "): the next cases would measure another kernel under the run's build, so the run "
                               "stops here with the cases measured so far stored; put the run's build back and "
                               "--resume, or start a new run");
    }
    // Touched, not rebuilt: the same bytes; the new identities are watched from now on.
    watched.files = std::move(files);
    watched.identities = std::move(identities);
  }
}

}  // namespace attnsweep::execute
