#pragma once
// SIGINT/SIGTERM handling: the first signal asks the sweep to stop at a safe
// point (between samples or cases); a second one, a second or more after the
// first, ends the process at once. One within that second is the same request
// sent twice (GNU timeout signals the process and then its process group).
#include <cstdint>

namespace attnsweep {

inline constexpr std::int64_t kRepeatedSignalWindowNs = 1000000000;  // 1 s

void install_interrupt_handlers();
int interrupt_signal();            // the signal received, 0 if none
bool interrupt_requested();
int interrupted_exit_code();       // 128 + signal: 130 for SIGINT, 143 for SIGTERM

// Thrown from measurement loops when a stop was requested; the case in flight
// is dropped (a resumed run redoes it).
struct Interrupted {};

}  // namespace attnsweep
