#pragma once
// A fresh folder under the system temp directory for one test, removed after
// it: named after the test and the process, so parallel ctest runs never meet.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace attnsweep::testing {

class ScratchDirectory {
 public:
  explicit ScratchDirectory(const std::string& prefix)
      : root_(std::filesystem::temp_directory_path() /
              (prefix + "-" + std::to_string(::getpid()) + "-" +
               ::testing::UnitTest::GetInstance()->current_test_info()->name())) {
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_);
  }
  ~ScratchDirectory() { std::filesystem::remove_all(root_); }
  ScratchDirectory(const ScratchDirectory&) = delete;
  ScratchDirectory& operator=(const ScratchDirectory&) = delete;

  std::string path(const std::string& name) const { return (root_ / name).string(); }
  // Writes `text` to `name` in the folder (bytes as given) and returns its path.
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(root_ / name, std::ios::binary) << text;
    return path(name);
  }

 private:
  std::filesystem::path root_;
};

}  // namespace attnsweep::testing
