#pragma once
// The files of one SQLite database: the database itself and the files SQLite
// keeps beside it, named after it (NAME-wal, NAME-shm, NAME-journal). A
// database stored under such a name is lost: the next writer of NAME replays,
// truncates or deletes that file (issue 21, finding 10).
#include <array>
#include <string>

namespace attnsweep::storage {

inline constexpr std::array<const char*, 3> kSideFileSuffixes = {"-wal", "-shm", "-journal"};

// Throws BadInputError "PATH: ..." when `path` ends in -wal, -shm or -journal:
// every command that takes a database (to read or to write) refuses such a
// name, with this one message.
void refuse_side_file_name(const std::string& path);

// Removes the database at `path` and its side files, ignoring any that are absent.
void remove_database_files(const std::string& path);

}  // namespace attnsweep::storage
