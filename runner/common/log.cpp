#include "runner/common/log.hpp"

#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <mutex>

namespace attnsweep::log {
namespace {

constexpr const char* kEraseLine = "\r\x1b[2K";  // to the line's start, then erase the whole line

// stderr's colour sink with a status line below the messages: each message
// erases the line, is written, and the line is drawn again. One mutex (the
// base sink's) covers messages and status changes alike, whatever the thread.
class StatusLineSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  void set_status(const std::string& line) {
    std::lock_guard<std::mutex> lock(mutex_);
    status_ = line;
    if (status_.empty()) erase();
    draw();  // over the old line: it begins by erasing it
  }
  void clear_status() {
    std::lock_guard<std::mutex> lock(mutex_);
    status_.clear();
    erase();
  }

 protected:
  void sink_it_(const spdlog::details::log_msg& message) override {
    erase();
    colours_.log(message);
    draw();
  }
  void flush_() override { colours_.flush(); }
  void set_pattern_(const std::string& pattern) override { colours_.set_pattern(pattern); }
  void set_formatter_(std::unique_ptr<spdlog::formatter> formatter) override {
    colours_.set_formatter(std::move(formatter));
  }

 private:
  void erase() {
    if (!shown_) return;
    std::fputs(kEraseLine, stderr);
    std::fflush(stderr);
    shown_ = false;
  }
  void draw() {
    if (status_.empty()) return;
    std::fputs(kEraseLine, stderr);
    std::fputs(status_.c_str(), stderr);
    std::fflush(stderr);
    shown_ = true;
  }

  spdlog::sinks::stderr_color_sink_st colours_;  // guarded by mutex_
  std::string status_;
  bool shown_ = false;
};

struct Logging {
  std::shared_ptr<StatusLineSink> sink = std::make_shared<StatusLineSink>();
  spdlog::logger logger{"attnsweep", sink};
  Logging() {
    // Logs go to stderr so that stdout holds only results (tables, plans).
    logger.set_pattern("[%H:%M:%S.%e] %^%l%$ %v");
    logger.set_level(spdlog::level::info);
  }
};

Logging& logging() {
  static Logging instance;
  return instance;
}
spdlog::logger& logger() { return logging().logger; }

}  // namespace

void set_level(const std::string& level) { logger().set_level(spdlog::level::from_str(level)); }
bool shows_info() { return logger().should_log(spdlog::level::info); }
void debug(const std::string& message) { logger().debug(message); }
void info(const std::string& message) { logger().info(message); }
void warn(const std::string& message) { logger().warn(message); }
void error(const std::string& message) { logger().error(message); }

void set_status_line(const std::string& line) { logging().sink->set_status(line); }
void clear_status_line() { logging().sink->clear_status(); }

bool stderr_is_terminal() { return ::isatty(STDERR_FILENO) == 1; }

int terminal_columns() {
  winsize size{};
  if (stderr_is_terminal() && ::ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  return 120;
}

}  // namespace attnsweep::log
