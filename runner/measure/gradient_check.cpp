#include "runner/measure/gradient_check.hpp"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/grad_mode.h>

#include <cmath>

#include "runner/measure/device_copy.hpp"
#include "runner/variants/naive_attention.hpp"

namespace attnsweep {
namespace {

// References larger than this are recomputed for every variant instead of kept.
constexpr std::int64_t kReferenceCacheBytes = std::int64_t{1} << 30;

}  // namespace

std::array<at::Tensor, 3> GradientCheck::reference_chunk(const AttentionInputs& inputs, const at::Tensor& grad_output,
                                                         std::int64_t batch, std::int64_t kv_head) const {
  const std::int64_t group = inputs.query.size(1) / inputs.key.size(1);  // query heads per key/value head
  const auto float64_leaf = [](const at::Tensor& t) { return t.detach().to(at::kDouble).requires_grad_(true); };
  AttentionInputs chunk = inputs;
  chunk.query = float64_leaf(inputs.query.narrow(0, batch, 1).narrow(1, kv_head * group, group));
  chunk.key = float64_leaf(inputs.key.narrow(0, batch, 1).narrow(1, kv_head, 1));
  chunk.value = float64_leaf(inputs.value.narrow(0, batch, 1).narrow(1, kv_head, 1));
  chunk.grouped = group != 1;
  const at::Tensor upstream = grad_output.narrow(0, batch, 1).narrow(1, kv_head * group, group).to(at::kDouble);
  const at::AutoGradMode grad_on(true);
  const at::Tensor output = naive_attention(chunk, MaskMode::out_of_place);
  const auto grads = torch::autograd::grad({output}, {chunk.query, chunk.key, chunk.value}, {upstream});
  return {grads[0], grads[1], grads[2]};
}

GradientErrors GradientCheck::relative_errors(const std::array<at::Tensor, 3>& grads, const AttentionInputs& inputs,
                                              const at::Tensor& grad_output) {
  const std::int64_t batches = inputs.query.size(0), kv_heads = inputs.key.size(1);
  const std::int64_t group = inputs.query.size(1) / kv_heads;
  const std::int64_t reference_bytes =
      static_cast<std::int64_t>(sizeof(double)) * (inputs.query.numel() + inputs.key.numel() + inputs.value.numel());
  const bool keep_it = reference_bytes <= kReferenceCacheBytes;
  std::array<double, 3> error_squares{}, reference_squares{};
  for (std::int64_t b = 0; b < batches; ++b) {
    for (std::int64_t h = 0; h < kv_heads; ++h) {
      const auto index = static_cast<std::size_t>(b * kv_heads + h);
      std::array<at::Tensor, 3> reference;
      if (index < reference_.size()) {
        reference = reference_[index];
      } else {
        reference = reference_chunk(inputs, grad_output, b, h);
        if (keep_it && index == reference_.size()) {
          std::array<at::Tensor, 3> kept;
          bool all = true;
          for (int i = 0; i < 3; ++i) {
            auto copy = copy_outside_caching_allocator(reference[static_cast<std::size_t>(i)], cuda_);
            if (!copy) all = false; else kept[static_cast<std::size_t>(i)] = std::move(*copy);
          }
          if (all) reference_.push_back(std::move(kept));
        }
      }
      const at::Tensor chunks[] = {grads[0].narrow(0, b, 1).narrow(1, h * group, group),
                                   grads[1].narrow(0, b, 1).narrow(1, h, 1), grads[2].narrow(0, b, 1).narrow(1, h, 1)};
      for (std::size_t i = 0; i < 3; ++i) {
        const at::Tensor difference = chunks[i].to(at::kDouble) - reference[i];
        error_squares[i] += difference.pow(2).sum().item<double>();
        reference_squares[i] += reference[i].pow(2).sum().item<double>();
      }
    }
  }
  const auto relative = [&](std::size_t i) { return std::sqrt(error_squares[i]) / std::sqrt(reference_squares[i]); };
  return {relative(0), relative(1), relative(2)};
}

}  // namespace attnsweep
