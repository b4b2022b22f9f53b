#include "runner/measure/gradient_check.hpp"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/grad_mode.h>

#include <cmath>
#include <optional>

#include "runner/common/interrupt.hpp"
#include "runner/measure/deterministic_algorithms.hpp"
#include "runner/measure/device_copy.hpp"
#include "runner/measure/reference_chunks.hpp"
#include "runner/variants/naive_attention.hpp"

namespace attnsweep {
std::array<at::Tensor, 3> GradientCheck::reference_chunk(const AttentionInputs& inputs, const at::Tensor& grad_output,
                                                         const ReferenceChunk& where) const {
  const auto float64_leaf = [](const at::Tensor& t) { return t.detach().to(at::kDouble).requires_grad_(true); };
  AttentionInputs chunk = in_float64(where.of(inputs));
  chunk.query = float64_leaf(chunk.query);
  chunk.key = float64_leaf(chunk.key);
  chunk.value = float64_leaf(chunk.value);
  const at::Tensor upstream = where.query_side(grad_output).to(at::kDouble);
  const at::AutoGradMode grad_on(true);
  const at::Tensor output = naive_attention(chunk, MaskMode::out_of_place);
  const auto grads = torch::autograd::grad({output}, {chunk.query, chunk.key, chunk.value}, {upstream});
  return {grads[0], grads[1], grads[2]};
}

GradientErrors GradientCheck::relative_errors(const std::array<at::Tensor, 3>& grads, const AttentionInputs& inputs,
                                              const at::Tensor& grad_output) {
  const DeterministicAlgorithms references_are_ours(false);
  const std::int64_t reference_bytes =
      static_cast<std::int64_t>(sizeof(double)) * (inputs.query.numel() + inputs.key.numel() + inputs.value.numel());
  const bool cached = !reference_dq_.empty();
  bool keep_it = !cached && reference_bytes <= kReferenceCacheBytes;
  std::vector<at::Tensor> kept_dq;
  std::vector<std::array<at::Tensor, 2>> kept_dkv;
  const auto keep = [&](const at::Tensor& t) -> at::Tensor {
    if (!keep_it) return {};
    auto copy = copy_outside_caching_allocator(t, cuda_);
    if (!copy) keep_it = false;  // no room: nothing is kept
    return copy ? *copy : at::Tensor();
  };
  // Summed on the device, read once at the end.
  const auto zero = [&] { return at::zeros({}, grads[0].options().dtype(at::kDouble)); };
  std::array<at::Tensor, 3> error_squares{zero(), zero(), zero()}, reference_squares{zero(), zero(), zero()};
  const auto add = [&](std::size_t i, const at::Tensor& measured, const at::Tensor& reference) {
    const at::Tensor difference = measured.to(at::kDouble) - reference;
    error_squares[i] += difference.pow(2).sum();
    reference_squares[i] += reference.pow(2).sum();
  };
  const std::vector<ReferenceChunk> chunks = reference_chunks(inputs, chunk_score_bytes_);
  std::size_t block = 0;
  at::Tensor block_dk, block_dv;  // the current key block's sums over its row chunks
  for (std::size_t index = 0; index < chunks.size(); ++index) {
    // A safe point: a Ctrl-C stops the reference here, not minutes later at its end.
    if (interrupt_requested()) throw Interrupted{};
    const ReferenceChunk& chunk = chunks[index];
    at::Tensor dq;
    if (cached) {
      dq = reference_dq_[index];
    } else {
      std::array<at::Tensor, 3> reference = reference_chunk(inputs, grad_output, chunk);
      dq = std::move(reference[0]);
      if (chunk.starts_key_block()) {
        block_dk = std::move(reference[1]);
        block_dv = std::move(reference[2]);
      } else {
        block_dk += reference[1];
        block_dv += reference[2];
      }
      kept_dq.push_back(keep(dq));
    }
    // dq of the real rows: a variable-length batch's padding rows are nobody's.
    add(0, chunk.real_rows_of(chunk.query_side(grads[0])), chunk.real_rows_of(dq));
    const bool ends_block = index + 1 == chunks.size() || chunks[index + 1].starts_key_block();
    if (!ends_block) continue;
    if (cached) {
      block_dk = reference_dkv_[block][0];
      block_dv = reference_dkv_[block][1];
    } else {
      kept_dkv.push_back({keep(block_dk), keep(block_dv)});
    }
    add(1, chunk.key_side(grads[1]), block_dk);
    add(2, chunk.key_side(grads[2]), block_dv);
    block_dk = at::Tensor();
    block_dv = at::Tensor();
    ++block;
  }
  if (keep_it) {
    reference_dq_ = std::move(kept_dq);
    reference_dkv_ = std::move(kept_dkv);
  }
  const auto relative = [&](std::size_t i) {
    return std::sqrt(error_squares[i].item<double>()) / std::sqrt(reference_squares[i].item<double>());
  };
  return {relative(0), relative(1), relative(2)};
}

}  // namespace attnsweep
