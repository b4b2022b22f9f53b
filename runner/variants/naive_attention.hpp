#pragma once
// The textbook attention both naive variants share; they differ only in how
// the mask is applied (out-of-place masked_fill vs in-place masked_fill_).
#include "runner/variants/variant.hpp"

namespace attnsweep {

enum class MaskMode { out_of_place, in_place };

at::Tensor naive_attention(const AttentionInputs& inputs, MaskMode mode);

// The float64 reference: the same math on upcast inputs (runner/measure).
at::Tensor reference_attention(const AttentionInputs& inputs);

}  // namespace attnsweep
