#pragma once
// Seeded random inputs for a case (never zeros), built outside any timing.
#include <cstdint>
#include <string>

#include "runner/plan/case.hpp"
#include "runner/variants/variant.hpp"

namespace attnsweep {

at::ScalarType scalar_type_of(Dtype dtype);

// q, k, v ~ N(0, 1) drawn in float32 on the case's device from a generator of
// that device seeded with `seed`, then cast: every dtype and variant of a shape
// sees the same values, and Python gets the same bits with
// torch.Generator(device).manual_seed(seed) and torch.randn(..., generator=g,
// device=device) on the same device. The boolean causal mask is built here once.
AttentionInputs make_inputs(const Case& c, const Device& device, std::uint64_t seed);

}  // namespace attnsweep
