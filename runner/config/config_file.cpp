// Reading a config file from its path (load_config, config.hpp): only a
// regular file of at most 16 MiB, each refusal saying why in the user's terms.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

#include "runner/common/file_kind.hpp"
#include "runner/config/claims.hpp"
#include "runner/config/config.hpp"

namespace attnsweep {

namespace {

// A config is a small text file; anything larger is a wrong path (a log, a data file).
constexpr std::size_t kMaxConfigBytes = std::size_t(16) << 20;

// Why a path cannot be opened, from errno, as the rest of a "PATH: ..." line.
std::string open_failure(int error) {
  switch (error) {
    case ENOENT: return "config file not found";
    case ENOTDIR: return "config file not found: a part of the path is not a directory";
    case ELOOP: return "too many levels of symbolic links (a symlink loop?); expected a YAML config file";
    case ENAMETOOLONG:
      return "file name too long (at most " + std::to_string(NAME_MAX) + " bytes a name and " +
             std::to_string(PATH_MAX - 1) + " a path)";
    case EACCES: return "permission denied (the file is not readable, or a directory on its path is not searchable)";
    case EISDIR: return "is a directory; expected a YAML config file";
    default: return std::string("cannot open the config file: ") + std::strerror(error);
  }
}

// Only a regular file (after symlinks) is read: a FIFO would block, /dev/zero never ends.
void check_regular_file(const std::string& path, const struct stat& info) {
  if (S_ISDIR(info.st_mode)) throw BadInputError(path + ": " + open_failure(EISDIR));
  if (!S_ISREG(info.st_mode)) {
    throw BadInputError(path + ": is " + file_kind(info.st_mode) +
                        ", not a regular file; save the config as a YAML file and give its path");
  }
  if (static_cast<std::uint64_t>(info.st_size) > kMaxConfigBytes) {
    throw BadInputError(path + ": is " + std::to_string(info.st_size) + " bytes; a config file may be at most " +
                        std::to_string(kMaxConfigBytes >> 20) + " MiB (" + std::to_string(kMaxConfigBytes) + " bytes)");
  }
}

class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

// stat, refuse what is not a regular file of at most kMaxConfigBytes, then read
// at most one byte more than that (the file may change between stat and read).
std::string read_config_file(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) throw BadInputError(path + ": " + open_failure(errno));
  check_regular_file(path, info);
  // O_NONBLOCK: if a FIFO replaced the file since stat, open must not wait for a writer.
  const FileDescriptor file(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (file.get() < 0) throw BadInputError(path + ": " + open_failure(errno));
  if (::fstat(file.get(), &info) != 0) throw BadInputError(path + ": " + open_failure(errno));
  check_regular_file(path, info);
  std::string text;
  char chunk[1 << 16];
  while (text.size() <= kMaxConfigBytes) {
    const ssize_t got = ::read(file.get(), chunk, std::min(sizeof chunk, kMaxConfigBytes + 1 - text.size()));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw BadInputError(path + ": cannot read the config file: " + std::strerror(errno));
    if (got == 0) return text;
    text.append(chunk, static_cast<std::size_t>(got));
  }
  throw BadInputError(path + ": grew past " + std::to_string(kMaxConfigBytes >> 20) +
                      " MiB while being read; a config file may be at most " + std::to_string(kMaxConfigBytes >> 20) +
                      " MiB");
}

// The claims files are read here, not by parse_config: a run's stored config
// (a worker's, a shard's) is parsed without them, as the parent stored the claims.
Config load_config(const std::string& path) {
  Config config = parse_config(read_config_file(path), path);
  config.claims = read_claims_files(path, config.yaml_text, config.claims_files, config.seed);
  return config;
}

}  // namespace attnsweep
