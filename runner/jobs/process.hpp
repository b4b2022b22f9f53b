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
  bool timed_out = false;           // stopped at its time limit (exit_code is then the signal's)
  double time_limit_seconds = 0;    // the limit it ran under; 0: none
  bool succeeded() const { return exit_code == 0 && !timed_out; }
};

// After the time limit: SIGTERM to the program's process group, then SIGKILL
// this long after when it is still there.
inline constexpr double kTerminateGraceSeconds = 3;

// The first executable file named `name` in the directories of PATH, or none.
std::optional<std::string> find_on_path(const std::string& name);

// Runs `executable` with `arguments` (argv[0] = executable) to its end, with
// this process's environment, stdin closed, and both output streams captured;
// with `output_fd` >= 0 its stdout goes into that open file instead (output
// stays empty). The program runs in a process group of its own, and gets
// SIGTERM should this process die first. With `time_limit_seconds` > 0 it is
// stopped at that limit: SIGTERM to its whole group (what it started too),
// SIGKILL kTerminateGraceSeconds later, and the result says timed_out. Throws
// std::runtime_error when it cannot fork.
ProcessResult run_process(const std::string& executable, const std::vector<std::string>& arguments,
                          int output_fd = -1, double time_limit_seconds = 0);

}  // namespace attnsweep::jobs
