#include "runner/common/score_mod.hpp"

#include <stdexcept>

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

std::string ScoreMod::word(std::size_t index) const {
  switch (index) {
    case 0: return softcap ? softcap_text(*softcap) : "none";
    case 1: return alibi ? "true" : "false";
    case 2: return sinks ? "true" : "false";
  }
  throw std::logic_error("no score modification at index " + std::to_string(index));
}

bool ScoreMod::has(std::size_t index) const {
  switch (index) {
    case 0: return softcap.has_value();
    case 1: return alibi;
    case 2: return sinks;
  }
  throw std::logic_error("no score modification at index " + std::to_string(index));
}

const char* ScoreMod::flop_clause(std::size_t index) {
  switch (index) {
    case 0:
      return "; soft-capping (softcap) adds no flops: its tanh is not counted, as the softmax's exponentials are "
             "not (FlashAttention's and cuDNN frontend's benchmarks count the same)";
    case 1:
      return "; ALiBi adds no flops (its bias add is not counted) and no min_bytes (a fused kernel makes the bias "
             "from one slope per head; an explicit (heads, Sq, Skv) bias read by naive and SDPA is their own cost)";
    case 2: return "; attention sinks add no flops and no min_bytes (one logit per head)";
  }
  throw std::logic_error("no score modification at index " + std::to_string(index));
}

std::string ScoreMod::label() const {
  std::string text = softcap ? "softcap" + softcap_text(*softcap) : "";
  if (alibi) text += text.empty() ? "alibi" : " alibi";
  if (sinks) text += text.empty() ? "sinks" : " sinks";
  return text;
}

}  // namespace attnsweep
