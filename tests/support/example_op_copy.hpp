#pragma once
// A copy of the example op library (examples/attention_op, ATTNSWEEP_EXAMPLE_OP_LIBRARY)
// that a CLI test may rebuild under a run: appending bytes changes its build
// (its fingerprint), and the loader ignores them.
#include <filesystem>
#include <string>

namespace attnsweep::testing {

// Copies the example op library to FOLDER/example.so, FOLDER created as needed; returns that path.
inline std::string example_op_copy(const std::string& folder) {
  std::filesystem::create_directories(folder);
  const std::string library = folder + "/example.so";
  std::filesystem::copy_file(ATTNSWEEP_EXAMPLE_OP_LIBRARY, library);
  return library;
}

}  // namespace attnsweep::testing
