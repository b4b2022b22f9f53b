#pragma once
// Where temporary files go: TMPDIR, as POSIX says, else /tmp. One place, so
// that every command refuses an unusable TMPDIR in the same words, before it
// starts (libstdc++'s temp_directory_path fails on an empty TMPDIR and says
// only "filesystem error: temp_directory_path").
#include <string>

namespace attnsweep {

// $TMPDIR, or /tmp when TMPDIR is unset or empty. Throws BadInputError
// "TMPDIR=/nope: no such folder; set TMPDIR to a writable folder" (or "not a
// folder", or "cannot write into it: Permission denied") when TMPDIR names
// something temporary files cannot be made in.
std::string temp_folder();

}  // namespace attnsweep
