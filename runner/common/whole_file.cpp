#include "runner/common/whole_file.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace attnsweep {

namespace fs = std::filesystem;

void write_whole_file(const std::string& output, const std::string& text, const std::string& option) {
  // A write that fails (a full disk, a read-only folder) is a runtime failure
  // (exit 1) and says why in the system's words.
  const auto failed = [&](const std::string& what) {
    return std::runtime_error(option + " " + output + ": cannot write " + what + ": " + std::strerror(errno));
  };
  // What the path names after every link (stat follows them): /dev/stdout is a
  // link to /proc/self/fd/1, whose own target ("pipe:[N]") is no path at all.
  struct stat named {};
  if (::stat(output.c_str(), &named) == 0 && !S_ISREG(named.st_mode)) {
    std::ofstream file(output, std::ios::binary);
    errno = 0;
    file << text;
    file.close();
    if (!file) throw failed("to it");
    return;
  }
  std::error_code error;
  const fs::path target = fs::is_symlink(output, error) ? fs::weakly_canonical(fs::absolute(output), error)
                                                        : fs::path(output);
  const std::string temporary = target.string() + ".tmp-" + std::to_string(::getpid());
  {
    errno = 0;
    std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
    file << text;
    file.close();
    if (!file) {
      const std::runtime_error failure = failed(temporary);
      std::remove(temporary.c_str());
      throw failure;
    }
  }
  fs::rename(temporary, target, error);
  if (error) {
    std::remove(temporary.c_str());
    throw std::runtime_error(option + " " + output + ": cannot write: " + error.message());
  }
}

}  // namespace attnsweep
