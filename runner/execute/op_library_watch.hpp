#pragma once
// An op library rebuilt while a run measures it (issue 55, item 9): with
// --isolate or --gpus every worker loads the library anew, so a library rebuilt
// mid-run would be measured under the run's first build (runs.op_libraries).
// Two checks, both against the run's builds: the parent, before each worker
// starts, and each worker once it has loaded the libraries (a rebuild between
// the parent's check and the worker's dlopen, or before a --gpus worker's lazy
// load, is caught there). Both compare the files' identities (the loader's list
// of files, each one's device, inode, size and modification time) with those
// the parent took before the run's builds were hashed, and hash only files
// whose identity moved (a touch is not a rebuild). LibTorch-free: files only.
#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

#include "runner/variants/op_library_spec.hpp"

namespace attnsweep::execute {

class OpLibraryWatch {
 public:
  // Takes the files' identities now: made before the run's builds are hashed
  // (runs.op_libraries), so a change after that hash moves an identity.
  explicit OpLibraryWatch(const std::map<std::string, OpLibrarySpec>& libraries);
  // A worker's watch: the identities its parent took (identities()).
  OpLibraryWatch(const std::map<std::string, OpLibrarySpec>& libraries, const std::string& identities);

  // The identities as one line of JSON, for the workers' command line.
  std::string identities() const;

  // `builds`: runs.op_libraries of the run (variant name -> fingerprint, JSON);
  // a library the run recorded no build of (a run before schema 22) is not watched.
  void expect(const std::string& builds);

  // Throws std::runtime_error naming the library, its run build and the build
  // now there when a library's files are another build than the run's.
  void check();

 private:
  struct FileIdentity {
    dev_t device = 0;
    ino_t inode = 0;
    off_t size = -1;
    long long modified_ns = -1;
    bool operator!=(const FileIdentity& other) const {
      return device != other.device || inode != other.inode || size != other.size || modified_ns != other.modified_ns;
    }
  };
  static FileIdentity identity_of(const std::string& file);
  struct Watched {
    OpLibrarySpec spec;
    std::vector<std::string> files;  // the loader's list (op_library_files)
    std::vector<FileIdentity> identities;
  };
  static std::vector<std::string> files_of(const OpLibrarySpec& spec);
  std::map<std::string, Watched> libraries_;     // by variant name
  std::map<std::string, std::string> expected_;  // variant name -> the run's fingerprint
};

}  // namespace attnsweep::execute
