#pragma once
// The backward's numerics: dq, dk and dv of a variant against float64 autograd
// of the textbook attention on the same inputs and the same upstream gradient,
// one relative Frobenius error per gradient. The reference is computed one
// (batch entry, key/value head) at a time, with the query heads that share that
// key/value head, so the float64 score matrices stay small even at 8k x 8k; the
// reference gradients of one set of inputs are kept for the next variants of
// those inputs (up to 1 GiB, outside PyTorch's caching allocator).
#include <array>
#include <vector>

#include "runner/common/identities.hpp"
#include "runner/measure/reference_chunks.hpp"
#include "runner/variants/variant.hpp"

namespace attnsweep {

struct GradientErrors {
  double query = 0, key = 0, value = 0;  // NaN or Inf when that gradient is not finite
};

class GradientCheck {
 public:
  explicit GradientCheck(const Device& device) : cuda_(device.is_cuda()) {}

  // `grads` are dq, dk, dv in the inputs' (batch, heads, seq, head_dim) layout,
  // from a backward with `grad_output` as the output's gradient.
  GradientErrors relative_errors(const std::array<at::Tensor, 3>& grads, const AttentionInputs& inputs,
                                 const at::Tensor& grad_output);
  // New inputs: the kept reference no longer applies.
  void forget() { reference_.clear(); }

 private:
  std::array<at::Tensor, 3> reference_chunk(const AttentionInputs& inputs, const at::Tensor& grad_output,
                                            const ReferenceChunk& where) const;
  bool cuda_;
  std::vector<std::array<at::Tensor, 3>> reference_;  // per chunk, filled by the first check
};

}  // namespace attnsweep
