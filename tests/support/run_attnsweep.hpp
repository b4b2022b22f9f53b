#pragma once
// Runs the attnsweep binary under test (ATTNSWEEP_BINARY) through a shell, as a
// user would, and returns its exit code and everything it printed.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace attnsweep::testing {

struct Outcome {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// `environment`: assignments put before the command, e.g. "NAME=value ".
inline Outcome run_attnsweep(const std::string& arguments, const std::string& environment = "") {
  const std::string command = environment + std::string(ATTNSWEEP_BINARY) + " " + arguments + " 2>&1";
  Outcome outcome;
  FILE* pipe = popen(command.c_str(), "r");
  std::array<char, 4096> buffer{};
  while (fgets(buffer.data(), buffer.size(), pipe)) outcome.output += buffer.data();
  const int status = pclose(pipe);
  outcome.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return outcome;
}

}  // namespace attnsweep::testing
