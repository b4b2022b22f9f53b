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

std::string ScoreMod::label() const { return softcap ? "softcap" + softcap_text(*softcap) : ""; }

}  // namespace attnsweep
