#include "runner/common/interrupt.hpp"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <ctime>

namespace attnsweep {
namespace {

std::atomic<int> received{0};
std::atomic<std::int64_t> first_at_ns{0};

// clock_gettime is async-signal-safe (POSIX), so the handler may read it.
std::int64_t monotonic_ns() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<std::int64_t>(now.tv_sec) * 1000000000 + now.tv_nsec;
}

// Whether stderr is a terminal, read when the handlers are installed (isatty
// is not async-signal-safe): there the line first erases the progress line.
bool erase_first = false;

const char* signal_name(int signal) {
  switch (signal) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    case SIGUSR1: return "SIGUSR1";
    case SIGUSR2: return "SIGUSR2";
    case SIGALRM: return "SIGALRM";
  }
  return "a stop signal";
}

// Says at once what the first signal does: the sweep itself says nothing until
// its next safe point, which was minutes away inside a float64 reference (issue
// 55, item 11). write(2) and strlen are async-signal-safe; nothing else is used.
void say_stopping(int signal) {
  const char* parts[] = {erase_first ? "\r\x1b[2K" : "", "attnsweep: ", signal_name(signal),
                         ": stopping at the next safe point (between samples, reference chunks or cases; the case "
                         "being measured is dropped and --resume measures it again); send it again a second or more "
                         "from now to stop at once\n"};
  for (const char* part : parts) {
    for (std::size_t left = std::strlen(part); left > 0;) {
      const ssize_t written = ::write(STDERR_FILENO, part, left);
      if (written <= 0) return;
      part += written;
      left -= static_cast<std::size_t>(written);
    }
  }
}

extern "C" void on_signal(int signal) {
  const std::int64_t now = monotonic_ns();
  if (received.load() == 0) {
    first_at_ns.store(now);
    received.store(signal);
    const int saved_errno = errno;  // the interrupted code's errno stays its own
    say_stopping(signal);
    errno = saved_errno;
    return;
  }
  // GNU timeout signals its child and then the child's whole process group:
  // two signals microseconds apart that are one request. Only a signal sent
  // a while after the first is the user insisting.
  if (now - first_at_ns.load() < kRepeatedSignalWindowNs) return;
  std::signal(signal, SIG_DFL);
  std::raise(signal);
}

}  // namespace

void add_stop_signals(sigset_t& set) {
  for (const int signal : kStopSignals) sigaddset(&set, signal);
}

void install_interrupt_handlers() {
  erase_first = ::isatty(STDERR_FILENO) == 1;
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  // Each handler blocks the other stop signals while it runs: the first
  // signal's bookkeeping is never interleaved with a second one's.
  add_stop_signals(action.sa_mask);
  for (const int signal : kStopSignals) sigaction(signal, &action, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
}

void restore_default_signals_for_exec() { std::signal(SIGPIPE, SIG_DFL); }

int interrupt_signal() { return received.load(); }
bool interrupt_requested() { return received.load() != 0; }
int interrupted_exit_code() { return 128 + received.load(); }

}  // namespace attnsweep
