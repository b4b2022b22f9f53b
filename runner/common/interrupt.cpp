#include "runner/common/interrupt.hpp"

#include <atomic>
#include <csignal>

namespace attnsweep {
namespace {

std::atomic<int> received{0};

extern "C" void on_signal(int signal) {
  if (received.exchange(signal) != 0) {
    // Second signal: the user insists. Default action, now.
    std::signal(signal, SIG_DFL);
    std::raise(signal);
  }
}

}  // namespace

void install_interrupt_handlers() {
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

int interrupt_signal() { return received.load(); }
bool interrupt_requested() { return received.load() != 0; }
int interrupted_exit_code() { return 128 + received.load(); }

}  // namespace attnsweep
