#include "runner/common/copy_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace attnsweep {
namespace {

// Closes `fd` on every way out.
struct Descriptor {
  int fd;
  ~Descriptor() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

void copy_to_new_file(const std::string& from, const std::string& to) {
  const auto fail = [&](int error) {
    return std::runtime_error("cannot copy " + from + " to " + to + ": " + std::strerror(error));
  };
  Descriptor in{::open(from.c_str(), O_RDONLY | O_CLOEXEC)};
  if (in.fd < 0) throw fail(errno);
  Descriptor out{::open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666)};
  if (out.fd < 0) throw fail(errno);
  const auto remove_partial = [&](int error) {
    ::close(out.fd);
    out.fd = -1;
    ::unlink(to.c_str());
    return fail(error);
  };
  std::vector<char> buffer(1 << 20);
  for (;;) {
    const ssize_t got = ::read(in.fd, buffer.data(), buffer.size());
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw remove_partial(errno);
    if (got == 0) break;
    if (!write_all(out.fd, buffer.data(), static_cast<std::size_t>(got))) throw remove_partial(errno);
  }
  const int closed = ::close(out.fd);  // a network or bucket mount may report a full disk only here
  out.fd = -1;
  if (closed != 0) {
    const int error = errno;
    ::unlink(to.c_str());
    throw fail(error);
  }
}

bool write_all(int fd, const char* data, std::size_t size) {
  for (std::size_t written = 0; written < size;) {
    const ssize_t put = ::write(fd, data + written, size - written);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) {
      if (put == 0) errno = EIO;
      return false;
    }
    written += static_cast<std::size_t>(put);
  }
  return true;
}

}  // namespace attnsweep
