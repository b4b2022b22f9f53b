#include "runner/compare/value_text.hpp"

#include <cstdio>

#include "runner/common/text.hpp"

namespace attnsweep::compare {

std::string number_text(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.15g", value);
  return buffer;
}

std::string scientific(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1e", value);
  return buffer;
}

std::string percent(double share, int digits) { return text::fixed(100 * share, digits) + "%"; }

std::string signed_percent(double ratio) {
  const double change = 100 * (ratio - 1);
  return (change >= 0 ? "+" : "") + text::fixed(change, 1) + "%";
}

std::string p_text(double p) {
  if (p < 1e-4) return "p = " + scientific(p);
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "p = %.4f", p);
  return buffer;
}

}  // namespace attnsweep::compare
