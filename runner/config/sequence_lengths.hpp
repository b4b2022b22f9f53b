#pragma once
// The per-sequence lengths of a variable-length batch drawn from a seeded
// distribution (docs/config.md, "Variable-length batches"). Drawn when the
// config is read, so `plan` shows them and the store keeps them; the draw is
// the same on every machine and compiler for `uniform` (mt19937_64 with a
// hand-written transform: the standard's distributions are implementation-
// defined); `normal` also uses libm's log and cos, whose last bit may differ
// between C libraries (a length can then move by one).
#include <cstdint>
#include <string>
#include <vector>

namespace attnsweep {

enum class LengthDistribution { uniform, normal };

struct LengthDraw {
  LengthDistribution distribution = LengthDistribution::uniform;
  std::int64_t min = 1, max = 1;    // inclusive bounds (normal: clipped to them)
  double mean = 0, stdev = 0;        // normal only
  std::uint64_t seed = 0;            // the draw's own, mixed with the config's (another draw of the same kind)
};

// `count` lengths from `seed`: uniform integers in [min, max], or a normal
// rounded to the nearest integer and clipped to [min, max].
std::vector<std::int64_t> draw_lengths(const LengthDraw& draw, std::size_t count, std::uint64_t seed);

}  // namespace attnsweep
