#include "runner/compare/threshold.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

#include "runner/common/errors.hpp"

namespace attnsweep::compare {
namespace {

// A plain decimal number: digits, a point, an exponent and signs. strtod alone
// also takes leading blanks and hexadecimal ("0x10" would be 16%).
bool plain_number(const std::string& text) {
  return !text.empty() && text.find_first_not_of("0123456789.eE+-") == std::string::npos;
}

}  // namespace

double parse_threshold_percent(const std::string& text) {
  const std::string allowed = "; allowed: a number of percent > 0 and < 100, e.g. 5 (the default)";
  char* end = nullptr;
  errno = 0;
  const double value = !plain_number(text) ? NAN : std::strtod(text.c_str(), &end);
  if (!plain_number(text) || errno != 0 || end != text.c_str() + text.size() || !std::isfinite(value) || value <= 0 ||
      value >= 100) {
    throw BadInputError("--threshold: invalid value '" + text + "'" + allowed);
  }
  return value / 100;
}

double parse_min_change_us(const std::string& text) {
  char* end = nullptr;
  errno = 0;
  const double value = !plain_number(text) ? NAN : std::strtod(text.c_str(), &end);
  if (!plain_number(text) || errno != 0 || end != text.c_str() + text.size() || !std::isfinite(value) || value < 0) {
    throw BadInputError("--min-change-us: invalid value '" + text +
                        "'; allowed: microseconds, a number >= 0, e.g. 2 (the default)");
  }
  return value;
}

}  // namespace attnsweep::compare
