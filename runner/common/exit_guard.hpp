#pragma once
// Code attnsweep calls but does not own (an op library's initializer or op, a
// vendor library) may end the process with exit(), status 0 included: a sweep
// cut short would then look like a success to a script or a nightly gate.
// While an ExitGuard is alive, such an exit() prints one `error:` line naming
// what was running, runs the guard's cleanup (the sweep marks its run failed)
// and ends the process with the guard's status instead. An ordinary return
// from main, or an exit() after the guard is gone, is not affected.
// Signals and _exit() bypass it: workers and the op-library load check cover those.
//
// Two ways in. The executable replaces exit() itself (exit_interposer.cpp), so
// the guard acts before any exit handler runs: an atexit handler alone runs
// after the static destructors of everything made later, e.g. Kineto's config
// thread, which crashed the process (signal 11) before the error line about
// one time in a few hundred. Elsewhere (test binaries) an atexit handler is the way in.
#include <functional>
#include <string>

namespace attnsweep {

// If a guard is alive: its message, cleanup and exit status; never returns.
// Else returns, and the exit goes on as asked.
void exit_called();

class ExitGuard {
 public:
  // `activity`: what runs, for the message ("loading op library ...");
  // `advice`: what to do about it; `exit_code`: the status the process ends
  // with; `cleanup`: run once before that, its answer goes before the advice
  // in the message ("run 3 is marked failed"; an exception's text instead).
  ExitGuard(std::string activity, std::string advice, int exit_code, std::function<std::string()> cleanup = {});
  ~ExitGuard();
  ExitGuard(const ExitGuard&) = delete;
  ExitGuard& operator=(const ExitGuard&) = delete;

  // Names what runs now, e.g. the case in flight.
  void set_activity(const std::string& activity);

  // The line the guard prints, without "error: "; `cleaned` is what the cleanup answered.
  std::string message(const std::string& cleaned = "") const;

  // Called by the process's exit handler (public for it alone).
  [[noreturn]] void on_unexpected_exit();

 private:
  std::string activity_;
  std::string advice_;
  int exit_code_;
  std::function<std::string()> cleanup_;
  ExitGuard* outer_;  // the guard alive before this one, active again after it
};

}  // namespace attnsweep
