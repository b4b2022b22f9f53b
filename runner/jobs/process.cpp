#include "runner/jobs/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "runner/common/interrupt.hpp"

namespace attnsweep::jobs {

std::optional<std::string> find_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  if (!path) return std::nullopt;
  const std::string directories = path;
  std::size_t at = 0;
  for (;;) {
    const std::size_t end = directories.find(':', at);
    std::string directory = directories.substr(at, end == std::string::npos ? std::string::npos : end - at);
    if (directory.empty()) directory = ".";  // an empty PATH entry is the current directory
    const std::string candidate = directory + "/" + name;
    struct stat info {};
    if (::stat(candidate.c_str(), &info) == 0 && S_ISREG(info.st_mode) && ::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
    if (end == std::string::npos) return std::nullopt;
    at = end + 1;
  }
}

namespace {

using Clock = std::chrono::steady_clock;

// Milliseconds from now until `until`, rounded up, at least 0 (for poll).
int milliseconds_until(Clock::time_point until) {
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(until - Clock::now()).count();
  return static_cast<int>(std::clamp<long long>(left, 0, 24LL * 3600 * 1000));
}

}  // namespace

ProcessResult run_process(const std::string& executable, const std::vector<std::string>& arguments, int output_fd,
                          double time_limit_seconds) {
  int out_pipe[2], err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) throw std::runtime_error(std::string("cannot run ") + executable + ": " + std::strerror(errno));
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    throw std::runtime_error(std::string("cannot run ") + executable + ": " + std::strerror(errno));
  }
  std::vector<std::string> all = {executable};
  all.insert(all.end(), arguments.begin(), arguments.end());
  std::vector<char*> argv;
  for (auto& argument : all) argv.push_back(argument.data());
  argv.push_back(nullptr);

  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) ::close(fd);
    throw std::runtime_error(std::string("cannot run ") + executable + ": " + std::strerror(errno));
  }
  if (pid == 0) {
    // A group of its own, so that a time limit stops what it started too; SIGTERM
    // when attnsweep dies (Ctrl-C reaches only attnsweep's group).
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    attnsweep::restore_default_signals_for_exec();
    if (::getppid() != parent) ::_exit(127);  // attnsweep died before prctl
    const int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd >= 0) ::dup2(null_fd, STDIN_FILENO);
    // dup2 clears close-on-exec on the copies: only these reach the child.
    ::dup2(output_fd >= 0 ? output_fd : out_pipe[1], STDOUT_FILENO);
    ::dup2(err_pipe[1], STDERR_FILENO);
    ::execv(executable.c_str(), argv.data());
    const std::string message = "cannot execute " + executable + ": " + std::strerror(errno) + "\n";
    (void)!::write(STDERR_FILENO, message.data(), message.size());
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also here, so the group exists before any kill below (EACCES after exec: done by then)
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);

  ProcessResult result;
  result.time_limit_seconds = time_limit_seconds > 0 ? time_limit_seconds : 0;
  const bool limited = result.time_limit_seconds > 0;
  // running -> (limit) terminating: SIGTERM sent -> (grace) killed: SIGKILL sent.
  enum class Stage { running, terminating, killed } stage = Stage::running;
  Clock::time_point next_signal =
      limited ? Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(time_limit_seconds))
              : Clock::time_point::max();

  std::array<pollfd, 2> fds{{{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}}};
  std::array<std::string*, 2> sinks{&result.output, &result.errors};
  std::array<char, 8192> buffer{};
  int open_streams = 2;
  const auto close_streams = [&] {
    for (auto& fd : fds) {
      if (fd.fd >= 0) ::close(fd.fd);
      fd.fd = -1;
    }
    open_streams = 0;
  };
  int status = 0;
  bool reaped = false;
  for (;;) {
    if (open_streams == 0) {
      // Output done: wait for the exit, blocking where no limit can still fire.
      const bool block = !limited || stage == Stage::killed;
      const pid_t waited = ::waitpid(pid, &status, block ? 0 : WNOHANG);
      if (waited == pid) {
        reaped = true;
        break;
      }
      if (waited < 0 && errno != EINTR) break;
    }
    if (limited && stage != Stage::killed && Clock::now() >= next_signal) {
      if (stage == Stage::running) {
        ::kill(-pid, SIGTERM);
        result.timed_out = true;
        stage = Stage::terminating;
        next_signal = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                         std::chrono::duration<double>(kTerminateGraceSeconds));
      } else {
        ::kill(-pid, SIGKILL);
        ::kill(pid, SIGKILL);  // should it have left its group
        stage = Stage::killed;
        close_streams();  // what it leaves behind (a process outside its group) is not waited for
      }
      continue;
    }
    const int wait_ms = limited && stage != Stage::killed ? milliseconds_until(next_signal) : -1;
    if (open_streams == 0) {
      ::poll(nullptr, 0, std::min(wait_ms, 20));  // the child closed its output but runs on: look again shortly
      continue;
    }
    const int ready = ::poll(fds.data(), fds.size(), wait_ms);
    if (ready < 0) {
      if (errno == EINTR) continue;
      close_streams();
      continue;
    }
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t got = ::read(fds[i].fd, buffer.data(), buffer.size());
      if (got > 0) {
        sinks[i]->append(buffer.data(), static_cast<std::size_t>(got));
      } else if (got == 0 || errno != EINTR) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_streams;
      }
    }
  }
  close_streams();
  if (!reaped) {
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

}  // namespace attnsweep::jobs

