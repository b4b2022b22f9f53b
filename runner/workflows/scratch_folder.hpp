#pragma once
// A private folder under TMPDIR for copies of a history's nights (SQLite never
// runs in the history, which may be a bucket mount), removed with this object.
#include <stdlib.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "runner/common/temp_folder.hpp"

namespace attnsweep::workflows {

// A scratch folder for copies of earlier nights; removed file by file
// (std::filesystem::remove_all is avoided: it crashed inside this binary,
// docs/development.md).
class ScratchFolder {
 public:
  ScratchFolder() {
    std::string pattern = (std::filesystem::path(temp_folder()) / "attnsweep-nightly-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("cannot create a scratch folder under " + pattern);
    path_ = pattern;
  }
  ~ScratchFolder() {
    std::error_code ignored;
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(path_, ignored)) files.push_back(entry.path());
    for (const auto& file : files) std::filesystem::remove(file, ignored);
    std::filesystem::remove(path_, ignored);
  }
  ScratchFolder(const ScratchFolder&) = delete;
  ScratchFolder& operator=(const ScratchFolder&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace attnsweep::workflows
