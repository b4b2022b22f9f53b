#pragma once
// Processes released together to race on one database: the races the store and
// merge must survive (issue 21, finding 9: "database is locked", a new file
// removed under another process) only happen when the processes start within
// microseconds of each other. Each child blocks on a pipe until the parent
// closes its end, then runs its part and exits with what it returns.
#include <sys/wait.h>
#include <unistd.h>

#include <functional>
#include <vector>

namespace attnsweep::testing {

// Forks `count` children; child i waits for the release, then runs part(i) and
// exits with its result (4 if the wait itself failed). Returns each child's exit
// status in order, -1 for a child that did not exit (a signal), or an empty list
// if the pipe could not be made.
inline std::vector<int> race_processes(int count, const std::function<int(int)>& part) {
  int release[2];
  if (pipe(release) != 0) return {};
  std::vector<pid_t> children;
  for (int i = 0; i < count; ++i) {
    const pid_t pid = fork();
    if (pid == 0) {
      close(release[1]);
      char go = 0;
      if (read(release[0], &go, 1) < 0) _exit(4);  // returns 0 once the parent closes its end
      _exit(part(i));
    }
    children.push_back(pid);
  }
  close(release[0]);
  close(release[1]);  // every child goes
  std::vector<int> exit_codes;
  for (const pid_t pid : children) {
    int status = 0;
    waitpid(pid, &status, 0);
    exit_codes.push_back(WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  }
  return exit_codes;
}

}  // namespace attnsweep::testing
