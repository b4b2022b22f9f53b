#include "runner/measure/accuracy.hpp"

#include <ATen/ATen.h>

#include <cmath>
#include <optional>

#include "runner/measure/device_copy.hpp"
#include "runner/variants/naive_attention.hpp"

namespace attnsweep {
namespace {

// References larger than this are recomputed for every variant instead of kept.
constexpr std::int64_t kReferenceCacheBytes = std::int64_t{1} << 30;

}  // namespace

void AccuracyCheck::keep(const at::Tensor& reference) {
  if (auto copy = copy_outside_caching_allocator(reference, cuda_)) reference_.push_back(std::move(*copy));
}

double AccuracyCheck::relative_error(const at::Tensor& output, const AttentionInputs& inputs) {
  const bool keep_it = output.numel() * static_cast<std::int64_t>(sizeof(double)) <= kReferenceCacheBytes;
  double error_squares = 0, reference_squares = 0;
  for (std::int64_t b = 0; b < inputs.query.size(0); ++b) {
    const auto index = static_cast<std::size_t>(b);
    at::Tensor reference;
    if (index < reference_.size()) {
      reference = reference_[index];
    } else {
      AttentionInputs slice = inputs;
      slice.query = inputs.query.narrow(0, b, 1);
      slice.key = inputs.key.narrow(0, b, 1);
      slice.value = inputs.value.narrow(0, b, 1);
      reference = reference_attention(slice);
      if (keep_it && index == reference_.size()) keep(reference);
    }
    const at::Tensor difference = output.narrow(0, b, 1).to(at::kDouble) - reference;
    error_squares += difference.pow(2).sum().item<double>();
    reference_squares += reference.pow(2).sum().item<double>();
  }
  return std::sqrt(error_squares) / std::sqrt(reference_squares);
}

}  // namespace attnsweep
