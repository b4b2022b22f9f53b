#include "runner/jobs/duration.hpp"

#include <cmath>
#include <cstdlib>

#include "runner/common/errors.hpp"
#include "runner/common/text.hpp"
#include "runner/report/escaping.hpp"

namespace attnsweep::jobs {

std::int64_t parse_job_duration(const std::string& text, const std::string& option) {
  const auto refuse = [&] {
    return BadInputError(option + ": invalid duration '" + report::terminal_safe(text) +
                         "'; whole seconds, or a number with s, m, h or d (e.g. 5400, 90m, 1.5h)");
  };
  if (text.empty()) throw refuse();
  const char last = text.back();
  const bool has_unit = last == 's' || last == 'm' || last == 'h' || last == 'd';
  const std::string number = has_unit ? text.substr(0, text.size() - 1) : text;
  if (number.empty() || number.find_first_not_of("0123456789.") != std::string::npos ||
      number.find('.') != number.rfind('.') || number == ".") {
    throw refuse();
  }
  if (!has_unit && number.find('.') != std::string::npos) throw refuse();  // hf reads a bare number as int()
  const double value = std::strtod(number.c_str(), nullptr);
  const double unit = last == 'm' ? 60 : last == 'h' ? 3600 : last == 'd' ? 86400 : 1;
  const double seconds = std::floor(value * unit);
  if (seconds < 1 || seconds > 365.0 * 86400) throw refuse();
  return static_cast<std::int64_t>(seconds);
}

std::string describe_duration(std::int64_t nanoseconds) {
  const double minutes = static_cast<double>(nanoseconds) / 60e9;
  if (minutes < 1) return text::fixed(minutes * 60, 1) + " s";
  if (minutes < 120) return text::fixed(minutes, 1) + " min";
  return text::fixed(minutes / 60, 1) + " h";
}

std::string timeout_for(std::int64_t seconds) {
  if (seconds > 7200) return std::to_string((seconds + 3599) / 3600) + "h";
  const std::int64_t minutes = (seconds + 59) / 60;
  return std::to_string((minutes + 9) / 10 * 10) + "m";
}

}  // namespace attnsweep::jobs
