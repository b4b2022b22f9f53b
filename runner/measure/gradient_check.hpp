#pragma once
// The backward's numerics: dq, dk and dv of a variant against float64 autograd
// of the textbook attention on the same inputs and the same upstream gradient,
// one relative Frobenius error per gradient. The reference is computed one
// chunk at a time (reference_chunks.hpp: a batch entry, a run of key/value
// heads with the query heads that share them, a run of query rows), so the
// float64 score matrices stay small even at 64k x 64k: a chunk gives its rows'
// dq, and its share of its key block's dk and dv, summed over the block's row
// chunks. The reference gradients of one set of inputs are kept for the next
// variants of those inputs (up to 1 GiB, outside PyTorch's caching allocator).
#include <array>
#include <cstdint>
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
  // `chunk_score_bytes`: the float64 scores of one chunk (reference_chunks.hpp).
  explicit GradientCheck(const Device& device, std::int64_t chunk_score_bytes = kReferenceChunkScoreBytes)
      : cuda_(device.is_cuda()), chunk_score_bytes_(chunk_score_bytes) {}

  // `grads` are dq, dk, dv in the inputs' (batch, heads, seq, head_dim) layout,
  // from a backward with `grad_output` as the output's gradient. Throws
  // Interrupted at a chunk's start once a stop is requested (interrupt.hpp).
  GradientErrors relative_errors(const std::array<at::Tensor, 3>& grads, const AttentionInputs& inputs,
                                 const at::Tensor& grad_output);
  // New inputs: the kept reference no longer applies.
  void forget() {
    reference_dq_.clear();
    reference_dkv_.clear();
  }

 private:
  // dq of the chunk's rows and the chunk's share of its key block's dk and dv.
  std::array<at::Tensor, 3> reference_chunk(const AttentionInputs& inputs, const at::Tensor& grad_output,
                                            const ReferenceChunk& where) const;
  bool cuda_;
  std::int64_t chunk_score_bytes_;
  // Filled whole by the first check or not at all: dq per chunk, dk and dv per key block.
  std::vector<at::Tensor> reference_dq_;
  std::vector<std::array<at::Tensor, 2>> reference_dkv_;
};

}  // namespace attnsweep
