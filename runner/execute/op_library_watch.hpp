#pragma once
// An op library rebuilt while a run measures it (issue 55, item 9): with
// --isolate or --gpus every worker loads the library anew, so a library rebuilt
// mid-run would be measured under the run's first build (runs.op_libraries). The
// parent watches the files: before each worker starts, a file whose identity
// (device, inode, size, modification time) moved since the run began is hashed
// again, and a build other than the run's stops the run, as --resume refuses it.
// LibTorch-free: it reads files only.
#include <map>
#include <string>
#include <sys/types.h>
#include <vector>

#include "runner/variants/op_library_spec.hpp"

namespace attnsweep::execute {

class OpLibraryWatch {
 public:
  // Takes the files' identities now: made before the run's builds are hashed
  // (runs.op_libraries), so a change after that hash moves an identity.
  explicit OpLibraryWatch(const std::map<std::string, OpLibrarySpec>& libraries);

  // `builds`: runs.op_libraries of the run (variant name -> fingerprint, JSON);
  // empty where the run has none.
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
    std::vector<std::string> files;
    std::vector<FileIdentity> identities;
  };
  std::map<std::string, Watched> libraries_;  // by variant name
  std::map<std::string, std::string> expected_;  // variant name -> the run's fingerprint
};

}  // namespace attnsweep::execute
