#pragma once
// Seeded random inputs for a case (never zeros), built outside any timing.
#include <cstdint>
#include <string>

#include "runner/plan/case.hpp"
#include "runner/variants/variant.hpp"

namespace attnsweep {

at::ScalarType scalar_type_of(const std::string& dtype);

// q, k, v ~ N(0, 1) drawn in float32 on the CPU from a generator seeded with
// `seed` (so every device and dtype sees the same values for a shape), then
// moved to the device and cast. The boolean causal mask is built here once.
AttentionInputs make_inputs(const Case& c, const std::string& device, std::uint64_t seed);

}  // namespace attnsweep
