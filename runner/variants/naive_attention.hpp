#pragma once
// The textbook attention both naive variants share; they differ only in how
// the mask is applied (out-of-place masked_fill vs in-place masked_fill_).
#include "runner/variants/variant.hpp"

namespace attnsweep {

enum class MaskMode { out_of_place, in_place };

at::Tensor naive_attention(const AttentionInputs& inputs, MaskMode mode);

// The inputs in float64 for the references: q, k, v upcast, and ALiBi's bias
// made anew in float64 from the slopes and distances (the inputs' own is in
// their dtype, as a model would pass it: a reference must not share its rounding).
AttentionInputs in_float64(const AttentionInputs& inputs);

// The float64 reference: the same math on in_float64's inputs (runner/measure).
at::Tensor reference_attention(const AttentionInputs& inputs);

}  // namespace attnsweep
