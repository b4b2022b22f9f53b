#include "runner/config/sequence_lengths.hpp"

#include <algorithm>
#include <cmath>
#include <random>

namespace attnsweep {

std::vector<std::int64_t> draw_lengths(const LengthDraw& draw, std::size_t count, std::uint64_t seed) {
  std::mt19937_64 generator(seed);
  // A double in [0, 1) from the top 53 bits.
  auto unit = [&generator] { return static_cast<double>(generator() >> 11) * 0x1.0p-53; };
  std::vector<std::int64_t> lengths;
  const std::uint64_t span = static_cast<std::uint64_t>(draw.max - draw.min) + 1;
  while (lengths.size() < count) {
    if (draw.distribution == LengthDistribution::uniform) {
      lengths.push_back(draw.min + static_cast<std::int64_t>(generator() % span));  // bias < span / 2^64
    } else {
      // Box-Muller: one normal from two uniforms (1 - u keeps the log finite).
      const double radius = std::sqrt(-2.0 * std::log(1.0 - unit()));
      const double normal = radius * std::cos(2.0 * M_PI * unit());
      const double value = std::round(draw.mean + draw.stdev * normal);
      lengths.push_back(std::clamp(static_cast<std::int64_t>(std::clamp(value, -1e18, 1e18)), draw.min, draw.max));
    }
  }
  return lengths;
}

}  // namespace attnsweep
