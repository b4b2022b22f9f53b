#include "runner/execute/progress_display.hpp"

#include "runner/common/interrupt.hpp"

#include <signal.h>

#include <algorithm>
#include <cstdlib>
#include <utility>

#include "runner/common/log.hpp"
#include "runner/common/text.hpp"

namespace attnsweep::execute {
namespace {

constexpr double kLiveRedrawSeconds = 0.25;    // at most about 4 redraws a second
constexpr std::size_t kLogLineWidth = 120;     // the periodic lines of a job log

}  // namespace

ProgressMode choose_progress_mode(bool shows_info, bool stderr_terminal, const std::string& term) {
  if (!shows_info) return ProgressMode::off;
  return stderr_terminal && term != "dumb" ? ProgressMode::live_line : ProgressMode::periodic_lines;
}

ProgressMode progress_mode_here() {
  const char* term = std::getenv("TERM");
  return choose_progress_mode(log::shows_info(), log::stderr_is_terminal(), term ? term : "");
}

ProgressDisplay::ProgressDisplay(Progress progress, ProgressMode mode, double interval_seconds)
    : progress_(std::move(progress)), mode_(mode), interval_seconds_(interval_seconds), total_(progress_.total()) {
  if (mode_ == ProgressMode::live_line) {
    log::debug("progress: a live line at the bottom of the terminal");
  } else if (mode_ == ProgressMode::periodic_lines) {
    log::debug(interval_seconds_ > 0 ? "progress: a line every " + text::fixed(interval_seconds_, 1) + " s"
                                     : "progress: one line at the end");
  }
  const bool ticks = mode_ == ProgressMode::live_line || (mode_ == ProgressMode::periodic_lines && interval_seconds_ > 0);
  if (!ticks) return;
  if (mode_ == ProgressMode::live_line) {
    std::lock_guard<std::mutex> lock(mutex_);
    draw_live_line(true);
  }
  // The stop signals stay with the thread that runs the sweep (the ticker
  // inherits a mask that blocks them): a sleep or wait there is what they must interrupt.
  sigset_t stop_signals, previous;
  sigemptyset(&stop_signals);
  add_stop_signals(stop_signals);
  pthread_sigmask(SIG_BLOCK, &stop_signals, &previous);
  ticker_ = std::thread([this] { tick(); });
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

ProgressDisplay::~ProgressDisplay() { finish(); }

double ProgressDisplay::now_seconds() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

std::string ProgressDisplay::line_now(std::size_t width) const {
  return progress_line(progress_.snapshot(now_seconds()), width);
}

int ProgressDisplay::started(int plan_index, const std::string& label) {
  std::lock_guard<std::mutex> lock(mutex_);
  const int position = progress_.started(plan_index, label, now_seconds());
  if (mode_ == ProgressMode::live_line && !finished_) draw_live_line(true);
  return position;
}

void ProgressDisplay::finished(int plan_index, CaseStatus status) {
  std::lock_guard<std::mutex> lock(mutex_);
  const std::optional<Progress::Ran> ran = progress_.finished(plan_index, status, now_seconds());
  if (ran && mode_ != ProgressMode::off) {
    log::debug("progress: [" + std::to_string(ran->position) + "/" + std::to_string(total_) + "] took " +
               text::fixed(ran->seconds, 3) + " s; the cost model expected " +
               text::fixed(static_cast<double>(progress_.expected_ns(plan_index)) / 1e9, 3) + " s");
  }
  if (mode_ == ProgressMode::live_line && !finished_) draw_live_line(true);
}

// A start or an end shows at once unless the line was drawn less than
// kLiveRedrawSeconds ago; then the ticker's next round draws it.
void ProgressDisplay::draw_live_line(bool case_event) {
  const auto now = Clock::now();
  if (drawn_at_ && std::chrono::duration<double>(now - *drawn_at_).count() < kLiveRedrawSeconds * (case_event ? 1 : 0.8)) {
    return;
  }
  const std::string line = line_now(static_cast<std::size_t>(log::terminal_columns()));
  if (line == drawn_) return;  // every log message draws it again anyway
  log::set_status_line(line);
  drawn_ = line;
  drawn_at_ = now;
}

void ProgressDisplay::tick() {
  const double period = mode_ == ProgressMode::live_line ? kLiveRedrawSeconds : interval_seconds_;
  std::unique_lock<std::mutex> lock(mutex_);
  auto next = Clock::now();
  for (;;) {
    const auto step = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(period));
    next = std::max(next + step, Clock::now());  // after a stall, no burst of lines to catch up
    if (wake_.wait_until(lock, next, [this] { return stopping_; })) return;
    if (mode_ == ProgressMode::live_line) {
      draw_live_line(false);
    } else if (const ProgressSnapshot now = progress_.snapshot(now_seconds()); now.done < now.total) {
      log::info("progress: " + progress_line(now, kLogLineWidth));  // (every case done: the last line follows)
    }
  }
}

void ProgressDisplay::finish() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (finished_) return;
    finished_ = true;
    stopping_ = true;
  }
  wake_.notify_all();
  if (ticker_.joinable()) ticker_.join();
  if (mode_ == ProgressMode::off) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (mode_ == ProgressMode::live_line) log::clear_status_line();
  ProgressSnapshot last = progress_.snapshot(now_seconds());
  last.ended = true;
  log::info("progress: " + progress_line(last, kLogLineWidth));
}

}  // namespace attnsweep::execute
