#pragma once
// What a path is, in words, for messages that refuse anything but a regular
// file: a FIFO would block an open, /dev/zero never ends, /dev/null gets a
// journal written beside it.
#include <sys/types.h>

#include <string>

namespace attnsweep {

// "a regular file", "a directory", "a pipe (FIFO)", "a character device",
// "a block device", "a socket" or "a special file".
std::string file_kind(mode_t mode);

}  // namespace attnsweep
