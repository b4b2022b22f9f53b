#include "runner/common/interrupt.hpp"

#include <atomic>
#include <csignal>
#include <cstdint>
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

extern "C" void on_signal(int signal) {
  const std::int64_t now = monotonic_ns();
  if (received.load() == 0) {
    first_at_ns.store(now);
    received.store(signal);
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
