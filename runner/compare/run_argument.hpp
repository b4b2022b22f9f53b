#pragma once
// How a command names a run to compare: DATABASE[:RUN] (docs/compare.md).
// compare, nightly --baseline and report --compare parse it alike, and say
// alike which runs a file holds when the one named is not there.
#include <cstdint>
#include <optional>
#include <string>

#include "runner/storage/run_reader.hpp"

namespace attnsweep::compare {

// A command-line argument DATABASE[:RUN]: a path, and a run id or "latest".
struct RunArgument {
  std::string path;
  std::optional<std::int64_t> run_id;  // empty: the latest run in the file
};

// Parses `text` as DATABASE[:RUN]; `name` (BASELINE, CANDIDATE) goes into the
// message. A text that names an existing file is a path as it is, colons and
// all. Throws BadInputError for an empty path or a RUN that is not a positive
// integer or "latest".
RunArgument parse_run_argument(const std::string& text, const std::string& name);

// The run `argument` names in `reader` (its run_id, else the latest). Throws
// BadInputError naming `name`, the file (argument.path, else the reader's) and
// its runs when there is none.
std::int64_t resolve_run(const storage::RunReader& reader, const RunArgument& argument, const std::string& name);

}  // namespace attnsweep::compare
