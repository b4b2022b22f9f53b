#pragma once
// An fp8 case's inputs seen another way (issue 36): dequantised (fp8 value x
// its per-tensor descale) for naive's emulation and for the check of the
// kernel's own error, or the bf16 draw they were quantised from, for the
// stored error. Both copy tensor handles only where nothing changes.
#include "runner/variants/variant.hpp"

namespace attnsweep {

// fp8 * descale, computed in float32 and rounded once to `to`.
at::Tensor dequantize(const at::Tensor& fp8, const at::Tensor& descale, at::ScalarType to);

// q, k and v dequantised to `to` (the padded tensors: what naive and the
// references read); `quantized` cleared. The inputs themselves when not fp8.
AttentionInputs dequantized(const AttentionInputs& inputs, at::ScalarType to);

// q, k and v the bf16 draw before quantisation; `quantized` cleared. The
// inputs themselves when not fp8.
AttentionInputs unquantized(const AttentionInputs& inputs);

}  // namespace attnsweep
