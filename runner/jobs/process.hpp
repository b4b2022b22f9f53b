#pragma once
// Running another program (the `hf` command line) with an argument vector,
// never through a shell, and capturing what it prints.
#include <optional>
#include <string>
#include <vector>

namespace attnsweep::jobs {

struct ProcessResult {
  int exit_code = -1;  // 128 + N when killed by signal N; 127 when it could not be executed
  std::string output;  // stdout
  std::string errors;  // stderr
  bool succeeded() const { return exit_code == 0; }
};

// The first executable file named `name` in the directories of PATH, or none.
std::optional<std::string> find_on_path(const std::string& name);

// Runs `executable` with `arguments` (argv[0] = executable) to its end, with
// this process's environment, stdin closed, and both output streams captured;
// with `output_fd` >= 0 its stdout goes into that open file instead (output
// stays empty). Throws std::runtime_error when it cannot fork.
ProcessResult run_process(const std::string& executable, const std::vector<std::string>& arguments,
                          int output_fd = -1);

}  // namespace attnsweep::jobs
