#pragma once
// An op library runs its own code when it is loaded (static initializers). One
// that crashes, hangs or calls exit() there would take attnsweep with it: exit
// 139 without a message, a hang even with --isolate (the parent loads the
// libraries to check their mappings), or exit 0 with nothing done. So before
// the sweep loads them itself, a check process (this binary, `attnsweep worker
// --load-op-library FILE...`) loads them, under a time limit; a library that
// does not load cleanly there is refused as bad input, before any database is
// opened. docs/op-libraries.md.
#include <map>
#include <string>
#include <vector>

#include "runner/variants/op_library_spec.hpp"

namespace attnsweep::execute {

// Loads the shared objects of every spec in a check process. Throws
// BadInputError naming the variant, the file, what happened there (the signal,
// the exit status, or the time limit) and what to do; returns when all loaded
// (a file dlopen refuses is left to the sweep's own load, whose message says why).
void check_op_libraries_load(const std::map<std::string, OpLibrarySpec>& specs);

// The time limit of the check: ATTNSWEEP_OP_LIBRARY_LOAD_SECONDS, default 120
// (a large hub kernel on a slow disk takes seconds). Throws BadInputError for a bad value.
double op_library_load_seconds();

// The check process's side: dlopen each file in order (as the sweep will),
// telling the parent on stdout which one it starts, then that all returned.
void load_op_library_files(const std::vector<std::string>& files);

}  // namespace attnsweep::execute
