#pragma once
// The per-sequence lengths of a variable-length batch drawn from a seeded
// distribution (docs/config.md, "Variable-length batches"). Drawn when the
// config is read, so `plan` shows them and the store keeps them; the draw is
// the same on every machine and compiler (mt19937_64 with hand-written
// transforms: the standard's distributions are implementation-defined).
#include <cstdint>
#include <string>
#include <vector>

namespace attnsweep {

enum class LengthDistribution { uniform, normal };

struct LengthDraw {
  LengthDistribution distribution = LengthDistribution::uniform;
  std::int64_t min = 1, max = 1;    // inclusive bounds (normal: clipped to them)
  double mean = 0, stdev = 0;        // normal only
};

// `count` lengths from `seed`: uniform integers in [min, max], or a normal
// rounded to the nearest integer and clipped to [min, max].
std::vector<std::int64_t> draw_lengths(const LengthDraw& draw, std::size_t count, std::uint64_t seed);

}  // namespace attnsweep
