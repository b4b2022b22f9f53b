#pragma once
// Small string helpers shared by the config loader and the printers.
#include <string>
#include <vector>

namespace attnsweep::text {

std::string join(const std::vector<std::string>& items, const std::string& separator);

// Levenshtein distance, for "did you mean" suggestions.
std::size_t edit_distance(const std::string& a, const std::string& b);

// The candidate closest to `word`, or "" when none is close enough to help.
std::string nearest(const std::string& word, const std::vector<std::string>& candidates);

// A word a POSIX shell reads back as `word`: as it is when it holds only safe
// characters, else in single quotes (a quote inside as '\''). For hints users copy.
std::string shell_quote(const std::string& word);

// Fixed-point formatting with `digits` decimals.
std::string fixed(double value, int digits);
// A figure as a person writes it: one decimal between 0.1 and 10 million
// (702.0, 1062.5), else four significant digits (0.001234, 1.5e+12).
std::string figure(double value);

// The time now in UTC, by strftime's `format` ("%Y-%m-%dT%H:%M:%SZ", "%Y%m%dT%H%M%SZ").
std::string utc_now(const char* format);

// The text up to its first line break (a c10::Error's message; its backtrace follows).
std::string first_line(const std::string& text);

// A message on one line: each line break, with the blanks around it, becomes one
// space (PyTorch's messages and an op's exceptions span several lines; a table row cannot).
std::string one_line(const std::string& text);

}  // namespace attnsweep::text
