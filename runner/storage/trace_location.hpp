#pragma once
// Where a case's Chrome trace is. From schema 8 on, cases.trace_path is stored
// relative to the folder of the database file (runs.trace_path_base
// 'database'), so a database copied or published with its traces folder, or
// read from another directory, still finds them. Runs made before schema 8
// stored the path as given on the command line, relative to the directory the
// run started in ('working_directory'), which a reader cannot know.
#include <string>

namespace attnsweep::storage {

inline constexpr const char* kTraceBaseDatabase = "database";
inline constexpr const char* kTraceBaseWorkingDirectory = "working_directory";

// What to store for a trace written at `trace_file` (as this process names it)
// by a run in the database at `db_path`: the path from the database's folder
// to it ("results-traces/run1-0-naive-....json", "../traces/x.json"); empty
// for an empty `trace_file`. The path holds from the folder the database file
// is really in: where a symbolic link to that folder would send ".." elsewhere,
// it is taken from the real folder.
std::string trace_path_to_store(const std::string& db_path, const std::string& trace_file);

// The trace as this process can open it: `stored` resolved against the folder
// of `db_path` (the database as the reader named it; its real folder where a
// symbolic link on the way would lead ".." elsewhere) for a 'database' run, as
// stored otherwise (absolute, or relative to a directory only the run knew).
// Empty when nothing is stored.
std::string trace_file_of(const std::string& db_path, const std::string& trace_path_base, const std::string& stored);

}  // namespace attnsweep::storage
