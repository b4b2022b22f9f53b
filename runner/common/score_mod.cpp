#include "runner/common/score_mod.hpp"

#include <cstdio>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace attnsweep {

std::string softcap_text(double cap) {
  char text[40];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(text, sizeof text, "%.*g", digits, cap);
    if (std::strtod(text, nullptr) == cap) break;
  }
  // %g writes 30 as 3e+01: a whole cap is written whole.
  if (std::strchr(text, 'e') && cap == std::floor(cap) && std::fabs(cap) < 1e15) std::snprintf(text, sizeof text, "%.0f", cap);
  return text;
}

std::vector<double> alibi_slopes(std::int64_t heads) {
  const auto power_of_two_slopes = [](std::int64_t n) {
    std::vector<double> slopes;
    for (std::int64_t h = 0; h < n; ++h) slopes.push_back(std::exp2(-8.0 * static_cast<double>(h + 1) / static_cast<double>(n)));
    return slopes;
  };
  if (heads <= 0) return {};
  std::int64_t closest = 1;
  while (closest * 2 <= heads) closest *= 2;
  std::vector<double> slopes = power_of_two_slopes(closest);
  const std::vector<double> finer = power_of_two_slopes(2 * closest);
  for (std::size_t i = 0; static_cast<std::int64_t>(slopes.size()) < heads; i += 2) slopes.push_back(finer[i]);
  return slopes;
}

std::string ScoreMod::label() const {
  std::string text = softcap ? "softcap" + softcap_text(*softcap) : "";
  if (alibi) text += text.empty() ? "alibi" : " alibi";
  if (sinks) text += text.empty() ? "sinks" : " sinks";
  return text;
}

}  // namespace attnsweep
