#include "runner/common/temp_folder.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "runner/common/errors.hpp"

namespace attnsweep {

std::string temp_folder() {
  const char* set = std::getenv("TMPDIR");
  if (!set || !*set) return "/tmp";
  const std::string folder = set;
  const auto refuse = [&](const std::string& why) {
    throw BadInputError("TMPDIR=" + folder + ": " + why + "; set TMPDIR to a writable folder");
  };
  struct stat info {};
  if (::stat(folder.c_str(), &info) != 0) {
    refuse(errno == ENOENT || errno == ENOTDIR ? std::string("no such folder") : std::strerror(errno));
  }
  if (!S_ISDIR(info.st_mode)) refuse("not a folder");
  if (::access(folder.c_str(), W_OK | X_OK) != 0) refuse(std::string("cannot write into it: ") + std::strerror(errno));
  return folder;
}

}  // namespace attnsweep
