#pragma once
// Starts the attnsweep binary under test (ATTNSWEEP_BINARY) as a child process
// the test can signal, race or wait for; stdout and stderr go into a log file.
#include <fcntl.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

namespace attnsweep::testing {

struct SpawnOptions {
  std::string folder;          // the child's working directory; empty: the test's
  bool test_variants = false;  // ATTNSWEEP_TEST_VARIANTS=1 (test_hang, test_abort, ...)
};

// Starts attnsweep with `arguments`, stdout and stderr into `log`; returns its pid.
inline pid_t spawn_attnsweep(const std::vector<std::string>& arguments, const std::string& log,
                             const SpawnOptions& options = {}) {
  const pid_t pid = fork();
  if (pid == 0) {
    if (!options.folder.empty() && chdir(options.folder.c_str()) != 0) _exit(126);
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    if (options.test_variants) setenv("ATTNSWEEP_TEST_VARIANTS", "1", 1);
    const char* other = std::getenv("ATTNSWEEP_BINARY_UNDER_TEST");  // run_attnsweep.hpp's binary_under_test()
    const std::string binary = other && *other ? other : ATTNSWEEP_BINARY;
    std::vector<std::string> all = {binary};
    all.insert(all.end(), arguments.begin(), arguments.end());
    std::vector<char*> argv;
    for (auto& a : all) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(binary.c_str(), argv.data());
    _exit(127);
  }
  return pid;
}

// Waits for `pid`: its exit code, or 128 + the signal that ended it.
inline int wait_exit(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace attnsweep::testing
