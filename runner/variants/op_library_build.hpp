#pragma once
// Which build of each op library a run loaded (runs.op_libraries, issue 38): the
// first 16 hex digits of a SHA-256 of the files the run loads for it (the
// loader's own choice, op_library_files: the .so, or the shared objects of an
// unpacked wheel or of a hub kernel's chosen build folder), so that `history
// --by op_library` and `--culprits` can name a rebuilt or upgraded wheel as the
// version that changed on a night. LibTorch-free: it reads files only.
#include <map>
#include <string>
#include <vector>

namespace attnsweep {

// The fingerprint of a library's files: one file, the head of its SHA-256; several,
// of their names (relative to `root`, the library as configured) and digests, in
// name order. Files are read a chunk at a time. "unreadable: why" when one cannot be read.
std::string library_fingerprint(const std::string& root, const std::vector<std::string>& files);

// runs.op_libraries: a JSON object, variant name -> fingerprint; empty when there is none.
std::string op_library_builds(const std::map<std::string, std::string>& fingerprints);

}  // namespace attnsweep
