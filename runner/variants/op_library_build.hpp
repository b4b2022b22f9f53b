#pragma once
// Which build of each op library a run loaded (runs.op_libraries, issue 38): the
// first 16 hex digits of the SHA-256 of its library, so that `history --by
// op_library` and `--culprits` can name a rebuilt or upgraded wheel as the version
// that changed on a night. A library that is a folder (an unpacked wheel, a hub
// kernel) is fingerprinted by every shared object under it (name and digest).
// LibTorch-free: it reads files only.
#include <map>
#include <string>

#include "runner/variants/op_library_spec.hpp"

namespace attnsweep {

// A JSON object, variant name -> fingerprint ("unreadable: why" when the file
// cannot be read), in name order; empty when the config declares no op library.
std::string op_library_builds(const std::map<std::string, OpLibrarySpec>& libraries);

// The fingerprint of one file or folder (see above), or "unreadable: why".
std::string library_fingerprint(const std::string& path);

}  // namespace attnsweep
