#pragma once
// Stop signals: SIGINT, SIGTERM, SIGHUP (the terminal hung up: an ssh session
// that dropped), SIGUSR1, SIGUSR2 and SIGALRM. Each of them ends a process by
// default, which left a run `running` under a dead owner with no table and no
// resume hint (issue 33, item 13); handled, the first asks the sweep to stop at
// a safe point (between samples, float64 reference chunks or cases) and says so
// at once on stderr (issue 55, item 11), and the run is stored `interrupted`;
// a second one, a second or more after the first, ends the process at once.
// One within that second is the same request sent twice (GNU timeout signals
// the process and then its process group). SIGPIPE is ignored: a reader of
// attnsweep's output that went away makes writes fail, not the sweep die.
#include <csignal>
#include <cstdint>

namespace attnsweep {

inline constexpr std::int64_t kRepeatedSignalWindowNs = 1000000000;  // 1 s

// The stop signals, one list for the handlers here and for whatever cleans up
// before the process ends by one (runner/storage/removed_on_signal).
inline constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGALRM};

void install_interrupt_handlers();
// Adds the stop signals to `set`: threads that must not take them (a ticker) block these.
void add_stop_signals(sigset_t& set);
// In a forked child before exec: SIGPIPE back to its default (an ignored signal
// stays ignored across exec, and the programs attnsweep runs expect the default).
void restore_default_signals_for_exec();
int interrupt_signal();            // the signal received, 0 if none
bool interrupt_requested();
int interrupted_exit_code();       // 128 + signal: 130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP

// Thrown from measurement loops when a stop was requested; the case in flight
// is dropped (a resumed run redoes it).
struct Interrupted {};

}  // namespace attnsweep
