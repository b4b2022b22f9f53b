#pragma once
// A file written whole or not at all: the text goes into a temporary file
// beside the output, renamed over it at the end, so that a reader never sees
// half a page and a failure (a full disk, a signal, an error while the text
// was being made) leaves what was there before. `report -o` and
// `history --html` write through it.
#include <string>
#include <utility>
#include <vector>

namespace attnsweep {

// Writes `text` to `path` whole. A symbolic link is written through (the file
// it names is replaced, the link kept); a FIFO or a device is written into,
// never replaced by a file. A failure throws std::runtime_error
// "<option> <path>: cannot write ...: <the system's reason>" and removes the
// temporary file; `option` names the command's flag ("-o", "--html").
// The one rule for every output of every command (issue 55, item 1): refuses
// (BadInputError, "<option> <path>: ...") an output path that names a folder or
// a file in a missing folder, a symbolic link that names nothing (writing
// through it makes a file wherever it points, replacing it loses the link), any
// SQLite database (a night of a history, a results database) and each input
// listed (path, what it is: "the database itself", "the config that runs", an
// acceptance record), SQLite side files included. `report -o`, `history
// --html`, nightly's `--summary` and `--summary-json` check it before they
// read or run anything.
void refuse_output_path(const std::string& output, const std::string& option,
                        const std::vector<std::pair<std::string, std::string>>& inputs = {});

void write_whole_file(const std::string& path, const std::string& text, const std::string& option);

}  // namespace attnsweep
