#pragma once
// A file written whole or not at all: the text goes into a temporary file
// beside the output, renamed over it at the end, so that a reader never sees
// half a page and a failure (a full disk, a signal, an error while the text
// was being made) leaves what was there before. `report -o` and
// `history --html` write through it.
#include <string>

namespace attnsweep {

// Writes `text` to `path` whole. A symbolic link is written through (the file
// it names is replaced, the link kept); a FIFO or a device is written into,
// never replaced by a file. A failure throws std::runtime_error
// "<option> <path>: cannot write ...: <the system's reason>" and removes the
// temporary file; `option` names the command's flag ("-o", "--html").
void write_whole_file(const std::string& path, const std::string& text, const std::string& option);

}  // namespace attnsweep
