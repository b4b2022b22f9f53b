#pragma once
// Copying a whole file into a folder that may be a bucket mount (nightly's
// --history): written once, sequentially, and closed; every failure with the
// system's own reason. std::filesystem::copy_file reports a disk that fills
// mid-copy as "Input/output error" (a short sendfile), not ENOSPC.
#include <cstddef>
#include <string>

namespace attnsweep {

// Copies the regular file `from` into `to`, which must not exist (O_EXCL: an
// existing file is left alone). The new file's mode is 0666 less the umask.
// Throws std::runtime_error "cannot copy FROM to TO: REASON" (REASON as
// strerror: "No space left on device", "File exists", ...); a partial copy is
// removed.
void copy_to_new_file(const std::string& from, const std::string& to);

// Writes all `size` bytes at `data` to `fd`, through short writes and EINTR.
// False on a failure, with errno set (EIO for a write that wrote nothing).
bool write_all(int fd, const char* data, std::size_t size);

}  // namespace attnsweep
