#include "runner/storage/removed_on_signal.hpp"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstring>

#include "runner/common/interrupt.hpp"
#include "runner/storage/database_files.hpp"

namespace attnsweep::storage {
namespace {

// Every signal that ends attnsweep by default and that a sweep takes as a stop request.
constexpr const int (&kSignals)[6] = kStopSignals;
constexpr int kSignalCount = sizeof kSignals / sizeof kSignals[0];

// What the handler removes: every name precomputed, since it may only call
// async-signal-safe functions (unlink, rmdir, sigaction, raise).
struct Entry {
  volatile sig_atomic_t used = 0;
  char files[4][PATH_MAX + 16] = {};  // the database, -wal, -shm, -journal
  char folder[PATH_MAX] = {};
};
Entry entries[kMaxRemovedOnSignal];
struct sigaction previous[kSignalCount];
int registered = 0;  // entries in use: the handler is installed while > 0

int index_of(int signal) {
  for (int i = 0; i < kSignalCount; ++i) {
    if (kSignals[i] == signal) return i;
  }
  return -1;
}

extern "C" void remove_then_end(int signal) {
  const int at = index_of(signal);
  const struct sigaction& before = previous[at];
  if (!(before.sa_flags & SA_SIGINFO) && before.sa_handler == SIG_IGN) return;
  if ((before.sa_flags & SA_SIGINFO) || before.sa_handler != SIG_DFL) {
    // The process handles it (a stop request): it goes on and cleans up itself.
    if (before.sa_flags & SA_SIGINFO) {
      before.sa_sigaction(signal, nullptr, nullptr);
    } else {
      before.sa_handler(signal);
    }
    return;
  }
  for (Entry& entry : entries) {
    if (!entry.used) continue;
    for (const char* file : entry.files) ::unlink(file);
    if (entry.folder[0]) ::rmdir(entry.folder);
  }
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  sigemptyset(&default_action.sa_mask);
  sigaction(signal, &default_action, nullptr);
  raise(signal);  // delivered when this handler returns: the process ends by the signal, as it would have
}

}  // namespace

StopSignalsBlocked::StopSignalsBlocked() {
  sigset_t set;
  sigemptyset(&set);
  for (const int signal : kSignals) sigaddset(&set, signal);
  pthread_sigmask(SIG_BLOCK, &set, &before_);
}

StopSignalsBlocked::~StopSignalsBlocked() { pthread_sigmask(SIG_SETMASK, &before_, nullptr); }

RemovedOnSignal::RemovedOnSignal(const std::string& path, const std::string& folder) {
  if (path.size() >= PATH_MAX || folder.size() >= PATH_MAX) return;
  const StopSignalsBlocked blocked;  // the handler sees the entries change only whole
  for (int i = 0; i < kMaxRemovedOnSignal; ++i) {
    if (entries[i].used) continue;
    Entry& entry = entries[i];
    std::strcpy(entry.files[0], path.c_str());
    for (std::size_t s = 0; s < kSideFileSuffixes.size(); ++s) {
      std::strcpy(entry.files[s + 1], (path + kSideFileSuffixes[s]).c_str());
    }
    std::strcpy(entry.folder, folder.c_str());
    std::atomic_signal_fence(std::memory_order_release);  // the names are whole before a handler can see `used`
    entry.used = 1;
    slot_ = i;
    if (registered++ == 0) {
      struct sigaction action {};
      action.sa_handler = remove_then_end;
      sigemptyset(&action.sa_mask);
      for (const int signal : kSignals) sigaddset(&action.sa_mask, signal);
      for (int s = 0; s < kSignalCount; ++s) sigaction(kSignals[s], &action, &previous[s]);
    }
    return;
  }
}

RemovedOnSignal::~RemovedOnSignal() {
  if (slot_ < 0) return;
  const StopSignalsBlocked blocked;  // the handler sees the entries change only whole
  entries[slot_].used = 0;
  if (--registered == 0) {
    for (int s = 0; s < kSignalCount; ++s) sigaction(kSignals[s], &previous[s], nullptr);
  }
}

}  // namespace attnsweep::storage
