#include "runner/measure/output_check.hpp"

#include <ATen/ATen.h>

#include <sstream>
#include <vector>

namespace attnsweep {

std::string output_mismatch(const at::Tensor& output, const AttentionInputs& inputs) {
  if (!output.defined()) return "the variant returned an undefined tensor";
  const at::Tensor& query = inputs.query;
  // The query's sizes with the values' head dim last (head_dim_v where it differs from head_dim).
  const auto with_value_dim = [&](const at::Tensor& q) {
    std::vector<std::int64_t> sizes = q.sizes().vec();
    sizes.back() = inputs.value.size(-1);
    return sizes;
  };
  const std::vector<std::int64_t> expected = with_value_dim(query);
  std::ostringstream why;
  if (output.device() != query.device()) {
    why << "the output is on " << output.device() << ", the inputs on " << query.device();
  } else if (output.sizes().vec() != expected &&
             !(inputs.packed && output.sizes().vec() == with_value_dim(inputs.packed->query))) {
    why << "the output has shape " << output.sizes() << " but " << at::IntArrayRef(expected)
        << " was expected (batch, heads, seq_len_q, head_dim_v"
        << (inputs.packed ? "; or the packed rows, (total_q, heads, head_dim_v))" : ")");
  } else if (const at::ScalarType expected_type = inputs.quantized ? at::kBFloat16 : query.scalar_type();
             output.scalar_type() != expected_type) {
    // An fp8 case's output is bf16, as FlashAttention-3's fp8 forward writes it.
    why << "the output is " << output.scalar_type() << " but the inputs are " << query.scalar_type()
        << (inputs.quantized ? " (an fp8 case's output is bf16)" : "");
  }
  return why.str();
}

}  // namespace attnsweep
