#pragma once
// Shows a sweep's progress (progress.hpp) while it runs: on a terminal a live
// line kept below the log messages (redrawn when a case starts or ends and as
// time passes, at most about 4 times a second); elsewhere (a job log, a pipe,
// TERM=dumb) a plain `progress: ...` info line every interval; with info
// messages off (--quiet) nothing. At the end the live line is erased and the
// last state is logged once as a `progress: ...` line.
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "runner/execute/progress.hpp"

namespace attnsweep::execute {

enum class ProgressMode { off, live_line, periodic_lines };

// off when info messages are not shown; the live line on a terminal whose TERM
// is not "dumb"; else periodic lines.
ProgressMode choose_progress_mode(bool shows_info, bool stderr_terminal, const std::string& term);
// The mode for this process: the log level, stderr and TERM.
ProgressMode progress_mode_here();

class ProgressDisplay {
 public:
  // interval_seconds: between two periodic lines; 0 (or less) for none but the last.
  ProgressDisplay(Progress progress, ProgressMode mode, double interval_seconds);
  ~ProgressDisplay();  // finish()
  ProgressDisplay(const ProgressDisplay&) = delete;
  ProgressDisplay& operator=(const ProgressDisplay&) = delete;

  // Returns the case's position, the i of "[i/N]".
  int started(int plan_index, const std::string& label);
  void finished(int plan_index, CaseStatus status);
  int total() const { return total_; }
  // Stops the updates, erases the live line and logs the last state; once.
  void finish();

 private:
  using Clock = std::chrono::steady_clock;
  double now_seconds() const;
  std::string line_now(std::size_t width) const;  // mutex_ held
  void draw_live_line(bool case_event);             // mutex_ held
  void tick();                                      // the thread's loop

  Progress progress_;
  const ProgressMode mode_;
  const double interval_seconds_;
  const int total_;
  const Clock::time_point start_ = Clock::now();
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  bool finished_ = false;
  std::string drawn_;                          // the live line as last drawn
  std::optional<Clock::time_point> drawn_at_;  // when
  std::thread ticker_;
};

}  // namespace attnsweep::execute
