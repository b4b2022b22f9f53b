#include "runner/common/whole_file.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "runner/common/copy_file.hpp"
#include "runner/common/errors.hpp"
#include "runner/common/same_file.hpp"

namespace attnsweep {

namespace fs = std::filesystem;

namespace {

bool is_sqlite_database(const fs::path& path) {
  static const std::string header("SQLite format 3\0", 16);
  std::ifstream file(path, std::ios::binary);
  std::string start(header.size(), '\0');
  return file.read(start.data(), static_cast<std::streamsize>(start.size())) && start == header;
}

// The process's umask, read without changing it (umask(2) can only set it, and
// setting it back races other threads); 022 where /proc cannot tell.
mode_t current_umask() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("Umask:", 0) == 0) return static_cast<mode_t>(std::stoul(line.substr(6), nullptr, 8));
  }
  return 022;
}

}  // namespace

void refuse_output_path(const std::string& output, const std::string& option,
                        const std::vector<std::pair<std::string, std::string>>& inputs) {
  std::error_code error;
  const std::string named = option + " " + output + ": ";
  if (fs::is_symlink(output, error) && !fs::exists(output, error)) {
    throw BadInputError(named + "is a symbolic link to " + fs::read_symlink(output, error).string() +
                        ", which does not exist; remove the link or name another file");
  }
  if (fs::is_directory(output, error)) throw BadInputError(named + "is a folder; name a file in it");
  const fs::path folder = fs::absolute(output).parent_path();
  if (!fs::is_directory(folder, error)) throw BadInputError(named + "the folder " + folder.string() + " does not exist");
  for (const auto& [database, what] : inputs) {
    if (same_file(output, database)) throw BadInputError(named + "is " + what + "; name another file");
    for (const char* suffix : {"-wal", "-shm", "-journal"}) {
      if (same_file(output, database + suffix)) {
        throw BadInputError(named + "is SQLite's " + suffix + " file of " + database + "; name another file");
      }
    }
  }
  if (fs::is_regular_file(output, error) && is_sqlite_database(output)) {
    throw BadInputError(named + "is an SQLite database; name another file");
  }
  for (const std::string suffix : {"-wal", "-shm", "-journal"}) {
    const bool side_file = output.size() > suffix.size() &&
                           output.compare(output.size() - suffix.size(), suffix.size(), suffix) == 0;
    const std::string database = side_file ? output.substr(0, output.size() - suffix.size()) : "";
    if (side_file && fs::is_regular_file(database, error) && is_sqlite_database(database)) {
      throw BadInputError(named + "is SQLite's " + suffix + " file of " + database + "; name another file");
    }
  }
}

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
  // A temporary name no one can plant a link at beforehand (mkstemp: O_EXCL),
  // with the mode a new file gets (mkstemp's is 0600).
  std::string temporary = target.string() + ".tmp-XXXXXX";
  errno = 0;
  const int fd = ::mkstemp(temporary.data());
  if (fd < 0) throw failed("a temporary file beside it");
  ::fchmod(fd, 0666 & ~current_umask());  // best effort: a bucket mount may keep its own modes
  if (!write_all(fd, text.data(), text.size())) {
    const std::runtime_error failure = failed("to it");
    ::close(fd);
    std::remove(temporary.c_str());
    throw failure;
  }
  if (::close(fd) != 0) {
    const std::runtime_error failure = failed("to it");
    std::remove(temporary.c_str());
    throw failure;
  }
  fs::rename(temporary, target, error);
  if (error) {
    std::remove(temporary.c_str());
    throw std::runtime_error(option + " " + output + ": cannot write: " + error.message());
  }
}

}  // namespace attnsweep
