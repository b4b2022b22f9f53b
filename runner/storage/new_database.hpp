#pragma once
// Creating a database that several processes may create at once (two `run`s
// on one new --db, two `merge`s into one new output): the database is made
// whole in a private file beside it, then linked to its name (link(2) never
// replaces a file). So the name holds a complete database or nothing, one
// process wins, the others find the winner's database, and nobody removes
// files another process made (issue 21, finding 9).
#include <functional>
#include <string>

namespace attnsweep::storage {

enum class NewDatabase {
  made_here,        // `path` is the file `fill` made
  made_by_another,  // `path` appeared meanwhile; what `fill` made is removed
  unsupported,      // the folder has no hard links (FAT, some FUSE mounts); nothing was made
};

// Calls `fill` with a new empty file beside `path` (".NAME.new-XXXXXX", mode
// 0644 less the umask) and then links it to `path`. The private file is
// removed on every way out, with any -wal or -shm beside it (a SIGINT, SIGTERM
// or SIGHUP that ends the process included: removed_on_signal.hpp); so is what `fill`
// made when it throws (the error goes on; a BadInputError naming `path`
// instead of the private file). Throws BadInputError naming `path`
// when the folder cannot be written.
NewDatabase create_whole_database(const std::string& path, const std::function<void(const std::string& file)>& fill);

}  // namespace attnsweep::storage
