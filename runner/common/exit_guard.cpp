#include "runner/common/exit_guard.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <mutex>

#include "runner/common/log.hpp"

namespace attnsweep {
namespace {

std::mutex& guard_mutex() {
  static std::mutex mutex;
  return mutex;
}
ExitGuard* active = nullptr;  // the innermost guard alive, under guard_mutex

extern "C" void on_exit_called() { exit_called(); }

// Registered once, when the first guard is made: handlers run in reverse order
// of registration, so this one runs before the destructors of anything made later.
void register_exit_handler() {
  static const bool registered = std::atexit(on_exit_called) == 0;
  (void)registered;
}

}  // namespace

void exit_called() {
  ExitGuard* guard = nullptr;
  {
    std::lock_guard<std::mutex> lock(guard_mutex());
    guard = active;
  }
  if (guard) guard->on_unexpected_exit();
}

ExitGuard::ExitGuard(std::string activity, std::string advice, int exit_code, std::function<std::string()> cleanup)
    : activity_(std::move(activity)), advice_(std::move(advice)), exit_code_(exit_code), cleanup_(std::move(cleanup)) {
  register_exit_handler();
  std::lock_guard<std::mutex> lock(guard_mutex());
  outer_ = active;
  active = this;
}

ExitGuard::~ExitGuard() {
  std::lock_guard<std::mutex> lock(guard_mutex());
  active = outer_;
}

void ExitGuard::set_activity(const std::string& activity) {
  std::lock_guard<std::mutex> lock(guard_mutex());
  activity_ = activity;
}

std::string ExitGuard::message(const std::string& cleaned) const {
  return "exit() was called during " + activity_ + ": code attnsweep called (an op library, say) tried to end the "
         "process there, which would have passed for success; " + (cleaned.empty() ? "" : cleaned + "; ") + advice_;
}

void ExitGuard::on_unexpected_exit() {
  {
    std::lock_guard<std::mutex> lock(guard_mutex());
    active = nullptr;  // once: an exit() from the cleanup ends the process as it asks
  }
  std::cout.flush();
  std::fflush(stdout);
  std::string cleaned;
  if (cleanup_) {
    try {
      cleaned = cleanup_();
    } catch (const std::exception& error) {
      cleaned = error.what();
    } catch (...) {
      cleaned = "its cleanup failed";
    }
  }
  const std::string line = "error: " + message(cleaned) + "\n";
  try {
    log::clear_status_line();  // the live progress line of a terminal
  } catch (...) {
  }
  // write(2): the line is out before _exit, whatever state the streams are in.
  for (std::size_t done = 0; done < line.size();) {
    const ssize_t written = ::write(STDERR_FILENO, line.data() + done, line.size() - done);
    if (written <= 0) break;
    done += static_cast<std::size_t>(written);
  }
  ::_exit(exit_code_);
}

}  // namespace attnsweep
