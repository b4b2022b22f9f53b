#include "runner/storage/new_database.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <random>

#include "runner/common/errors.hpp"
#include "runner/storage/database_files.hpp"
#include "runner/storage/removed_on_signal.hpp"

namespace attnsweep::storage {
namespace {

// An empty file of a name nobody else has: O_EXCL, retried on a collision.
std::string create_private_file(const std::string& path) {
  const std::filesystem::path target(path);
  std::random_device entropy;
  const char* digits = "0123456789abcdefghijklmnopqrstuvwxyz";
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string suffix;
    for (int i = 0; i < 6; ++i) suffix += digits[entropy() % 36];
    const std::string file = (target.parent_path() / ("." + target.filename().string() + ".new-" + suffix)).string();
    const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd >= 0) {
      ::close(fd);
      return file;
    }
    if (errno != EEXIST) {
      throw BadInputError(path + ": cannot use as a results database: cannot create it: " + std::strerror(errno));
    }
  }
  throw BadInputError(path + ": cannot use as a results database: no free name for a new file beside it");
}

// A message about the private file, naming the database it was made for.
std::string with_name(std::string message, const std::string& file, const std::string& path) {
  for (auto at = message.find(file); at != std::string::npos; at = message.find(file, at + path.size())) {
    message.replace(at, file.size(), path);
  }
  return message;
}

}  // namespace

NewDatabase create_whole_database(const std::string& path, const std::function<void(const std::string& file)>& fill) {
  std::string file;
  std::optional<RemovedOnSignal> removed_on_signal;  // a killed process leaves no .NAME.new-* behind
  {
    const StopSignalsBlocked blocked;  // from the file's first moment
    file = create_private_file(path);
    removed_on_signal.emplace(file);
  }
  try {
    fill(file);
  } catch (const BadInputError& error) {
    remove_database_files(file);
    throw BadInputError(with_name(error.what(), file, path));
  } catch (...) {
    remove_database_files(file);
    throw;
  }
  const int linked = ::link(file.c_str(), path.c_str());
  const int error = errno;
  remove_database_files(file);
  if (linked == 0) return NewDatabase::made_here;
  if (error == EEXIST) return NewDatabase::made_by_another;
  if (error == EPERM || error == ENOTSUP || error == EOPNOTSUPP || error == EMLINK) return NewDatabase::unsupported;
  throw BadInputError(path + ": cannot use as a results database: cannot create it: " + std::strerror(error));
}

}  // namespace attnsweep::storage
