#pragma once
// Logging for the whole program. spdlog lives behind this interface because
// code that includes LibTorch headers must not include spdlog (torch ships fmt
// 12 headers, the system spdlog is built against fmt 9).
//
// A status line (the live progress of `attnsweep run` on a terminal) lives
// here too: it sits below the log messages, and every message first clears it
// and then draws it again, so neither mangles the other.
#include <string>

namespace attnsweep::log {

void set_level(const std::string& level);  // trace, debug, info, warn, error, off
bool shows_info();                         // info messages are written (the level is info or lower)
void debug(const std::string& message);
void info(const std::string& message);
void warn(const std::string& message);
void error(const std::string& message);

// The line kept at the bottom of stderr, drawn at once ("\r\x1b[2K" then the
// text, no newline). Only for a terminal (stderr_is_terminal); the caller keeps
// it shorter than terminal_columns().
void set_status_line(const std::string& line);
// Erases the status line (and draws no more until set again): before anything
// else writes to the terminal, e.g. the results table at the end.
void clear_status_line();
bool stderr_is_terminal();
int terminal_columns();  // of stderr's terminal; 120 when not a terminal or unknown

}  // namespace attnsweep::log
