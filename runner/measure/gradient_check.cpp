#include "runner/measure/gradient_check.hpp"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/grad_mode.h>

#include <cmath>

#include "runner/measure/device_copy.hpp"
#include "runner/measure/reference_chunks.hpp"
#include "runner/variants/naive_attention.hpp"

namespace attnsweep {
namespace {

// References larger than this are recomputed for every variant instead of kept.
constexpr std::int64_t kReferenceCacheBytes = std::int64_t{1} << 30;

}  // namespace

std::array<at::Tensor, 3> GradientCheck::reference_chunk(const AttentionInputs& inputs, const at::Tensor& grad_output,
                                                         const ReferenceChunk& where) const {
  const auto float64_leaf = [](const at::Tensor& t) { return t.detach().to(at::kDouble).requires_grad_(true); };
  AttentionInputs chunk = where.of(inputs);
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
  const std::int64_t reference_bytes =
      static_cast<std::int64_t>(sizeof(double)) * (inputs.query.numel() + inputs.key.numel() + inputs.value.numel());
  const bool keep_it = reference_bytes <= kReferenceCacheBytes;
  // Summed on the device, read once at the end.
  const auto zero = [&] { return at::zeros({}, grads[0].options().dtype(at::kDouble)); };
  std::array<at::Tensor, 3> error_squares{zero(), zero(), zero()}, reference_squares{zero(), zero(), zero()};
  const std::vector<ReferenceChunk> chunks = reference_chunks(inputs);
  for (std::size_t index = 0; index < chunks.size(); ++index) {
    const ReferenceChunk& chunk = chunks[index];
    std::array<at::Tensor, 3> reference;
    if (index < reference_.size()) {
      reference = reference_[index];
    } else {
      reference = reference_chunk(inputs, grad_output, chunk);
      if (keep_it && index == reference_.size()) {
        std::array<at::Tensor, 3> kept;
        bool all = true;
        for (std::size_t i = 0; i < 3; ++i) {
          auto copy = copy_outside_caching_allocator(reference[i], cuda_);
          if (!copy) {
            all = false;
            break;
          }
          kept[i] = std::move(*copy);
        }
        if (all) reference_.push_back(std::move(kept));
      }
    }
    const at::Tensor pieces[] = {chunk.query_side(grads[0]), chunk.key_side(grads[1]), chunk.key_side(grads[2])};
    for (std::size_t i = 0; i < 3; ++i) {
      const at::Tensor difference = pieces[i].to(at::kDouble) - reference[i];
      error_squares[i] += difference.pow(2).sum();
      reference_squares[i] += reference[i].pow(2).sum();
    }
  }
  const auto relative = [&](std::size_t i) {
    return std::sqrt(error_squares[i].item<double>()) / std::sqrt(reference_squares[i].item<double>());
  };
  return {relative(0), relative(1), relative(2)};
}

}  // namespace attnsweep
