#include "runner/common/text.hpp"

#include <cctype>
#include <cmath>

#include <algorithm>
#include <cstdio>
#include <ctime>

namespace attnsweep::text {

std::string join(const std::vector<std::string>& items, const std::string& separator) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += separator;
    out += items[i];
  }
  return out;
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> previous(b.size() + 1), current(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) previous[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, substitution});
    }
    std::swap(previous, current);
  }
  return previous[b.size()];
}

std::string nearest(const std::string& word, const std::vector<std::string>& candidates) {
  // A word that extends or truncates a candidate ("measure_typo", "seq") is a near miss too.
  for (const auto& candidate : candidates) {
    if (candidate.size() >= 3 && word.size() >= 3 &&
        (word.rfind(candidate, 0) == 0 || candidate.rfind(word, 0) == 0)) {
      return candidate;
    }
  }
  std::string best;
  std::size_t best_distance = std::string::npos;
  for (const auto& candidate : candidates) {
    const std::size_t distance = edit_distance(word, candidate);
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  // Only suggest when the typo is small relative to the word.
  const std::size_t limit = std::max<std::size_t>(2, word.size() / 3);
  return best_distance <= limit ? best : "";
}

std::string shell_quote(const std::string& word) {
  const bool safe = !word.empty() && word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                            "0123456789_-./:=@%+,") == std::string::npos;
  if (safe) return word;
  std::string quoted = "'";
  for (const char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string fixed(double value, int digits) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", digits, value);
  return buffer;
}

std::string figure(double value) {
  const double size = std::fabs(value);
  if (size == 0 || (size >= 0.1 && size < 1e7)) return fixed(value, 1);
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.4g", value);
  return buffer;
}

std::string first_line(const std::string& text) { return text.substr(0, text.find_first_of("\r\n")); }

std::string one_line(const std::string& text) {
  std::string line;
  for (std::size_t i = 0; i < text.size();) {
    if (text[i] != '\n' && text[i] != '\r') {
      line += text[i++];
      continue;
    }
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t')) line.pop_back();
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    if (!line.empty() && i < text.size()) line += ' ';
  }
  return line;
}

std::string utc_now(const char* format) {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[64];
  std::strftime(text, sizeof text, format, &utc);
  return text;
}

}  // namespace attnsweep::text
