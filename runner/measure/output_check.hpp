#pragma once
// What a variant's output must be before anything of it is measured or stored:
// a defined tensor on the case's device, with the query's shape (batch, heads,
// seq_len_q, head_dim) and dtype. Op libraries are code attnsweep did not write;
// a wrong-shape, float64 or integer output would otherwise be compared after a
// silent conversion and stored `ok` (issue 21, item 13).
#include <ATen/core/Tensor.h>

#include <string>

#include "runner/variants/variant.hpp"

namespace attnsweep {

// Empty when the output is what the inputs call for, else why not (one line).
std::string output_mismatch(const at::Tensor& output, const AttentionInputs& inputs);

}  // namespace attnsweep
