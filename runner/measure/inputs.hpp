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

// The upstream gradient of a backward pass: float32 randn of the output's shape
// (batch, heads, seq_len_q, head_dim_v) from a generator of the device seeded with
// seed + 1, then cast (never ones: a constant gradient hides errors that cancel);
// a variable-length batch's padding rows zero.
// Python: torch.randn(..., generator=torch.Generator(device).manual_seed(seed + 1)).
at::Tensor make_grad_output(const Case& c, const Device& device, std::uint64_t seed);

// The same q, k, v as leaves that require grad (sharing their storage, so the
// input guard still sees any write), with a draw id of their own: a variant's
// laid-out copies made from them are made with grad mode on and so carry the
// path back to these leaves. A variable-length batch's packed rows too.
AttentionInputs as_leaves(const AttentionInputs& inputs);

}  // namespace attnsweep
