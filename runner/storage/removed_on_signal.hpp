#pragma once
// A database file this process is making (the private file of a new database,
// a migrated copy under TMPDIR) must not outlive it: a SIGINT, SIGTERM or
// SIGHUP (any stop signal: SIGUSR1, SIGUSR2, SIGALRM too) that ends the process removes it first, with its -wal, -shm and
// -journal (issue 33, item 15: a SIGTERM'd merge left .OUT.new-* beside OUT).
#include <signal.h>

#include <string>

namespace attnsweep::storage {

// The stop signals blocked in this thread while alive; one that arrives is
// delivered when it ends. Held around making a file and registering it with
// RemovedOnSignal: a signal between the two would leave the file behind (a
// SIGTERM 2 ms after .OUT.new-* appeared did, under a loaded 2-core machine).
class StopSignalsBlocked {
 public:
  StopSignalsBlocked();
  ~StopSignalsBlocked();
  StopSignalsBlocked(const StopSignalsBlocked&) = delete;
  StopSignalsBlocked& operator=(const StopSignalsBlocked&) = delete;

 private:
  sigset_t before_;
};

// While alive, a stop signal (kStopSignals) whose disposition is the default
// (the process would end) removes the database `path` and its side files,
// then `folder` if given (once empty), and ends the process by that signal as
// before. Where the process handles the signal itself (attnsweep run's stop
// at a safe point), its handler is called instead: it goes on, and removes
// the file on its own way out. At most a few at once (kMaxRemovedOnSignal).
class RemovedOnSignal {
 public:
  explicit RemovedOnSignal(const std::string& path, const std::string& folder = "");
  ~RemovedOnSignal();
  RemovedOnSignal(const RemovedOnSignal&) = delete;
  RemovedOnSignal& operator=(const RemovedOnSignal&) = delete;

 private:
  int slot_ = -1;  // -1: not registered (too many at once, or a path too long)
};

inline constexpr int kMaxRemovedOnSignal = 4;

}  // namespace attnsweep::storage
