#pragma once
// Runs the attnsweep binary under test (ATTNSWEEP_BINARY) through a shell, as a
// user would, and returns its exit code and everything it printed.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace attnsweep::testing {

struct Outcome {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// The binary the tests drive: ATTNSWEEP_BINARY, or another build named by
// $ATTNSWEEP_BINARY_UNDER_TEST (to show that a new test fails on an older build).
inline std::string binary_under_test() {
  const char* other = std::getenv("ATTNSWEEP_BINARY_UNDER_TEST");
  return other && *other ? other : ATTNSWEEP_BINARY;
}

// `environment`: assignments put before the command, e.g. "NAME=value ".
inline Outcome run_attnsweep(const std::string& arguments, const std::string& environment = "") {
  const std::string command = environment + binary_under_test() + " " + arguments + " 2>&1";
  Outcome outcome;
  FILE* pipe = popen(command.c_str(), "r");
  std::array<char, 4096> buffer{};
  while (fgets(buffer.data(), buffer.size(), pipe)) outcome.output += buffer.data();
  const int status = pclose(pipe);
  outcome.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return outcome;
}

}  // namespace attnsweep::testing
