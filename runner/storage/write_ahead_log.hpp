#pragma once
// A database's write-ahead log folded back into it. Readers open a database
// read-only (open_for_reading.hpp), and a read-only connection that finds no
// -wal creates one, with its -shm, and cannot remove them when it closes: a
// command that read back the database it wrote leaves both beside it.
#include <string>

namespace attnsweep::storage {

// Opens the database at `path` as a writer and closes it again: the last
// connection to close checkpoints the log into the file and removes its -wal
// and -shm. Call it once the command's own readers of `path` are closed. False
// (and nothing changed) where it cannot be opened for writing; the side files
// then stay, and the database is whole all the same.
bool fold_write_ahead_log(const std::string& path);

}  // namespace attnsweep::storage
