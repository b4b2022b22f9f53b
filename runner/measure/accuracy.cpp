#include "runner/measure/accuracy.hpp"

#include <ATen/ATen.h>
#include <cuda_runtime_api.h>

#include <cmath>
#include <optional>

#include "runner/variants/naive_attention.hpp"

namespace attnsweep {
namespace {

// References larger than this are recomputed for every variant instead of kept.
constexpr std::int64_t kReferenceCacheBytes = std::int64_t{1} << 30;

// A copy of a CUDA tensor in memory of its own (cudaMalloc), outside PyTorch's
// caching allocator, so that a reference kept across cases is not counted in
// their peak_mem_bytes. Empty when the device has no room (then not kept).
std::optional<at::Tensor> copy_outside_allocator(const at::Tensor& tensor) {
  void* data = nullptr;
  if (cudaMalloc(&data, tensor.nbytes()) != cudaSuccess) {
    (void)cudaGetLastError();  // out of memory is not sticky; clear it
    return std::nullopt;
  }
  at::Tensor copy = at::from_blob(data, tensor.sizes(), [](void* pointer) { cudaFree(pointer); }, tensor.options());
  copy.copy_(tensor);
  return copy;
}

}  // namespace

void AccuracyCheck::keep(const at::Tensor& reference) {
  if (!cuda_) {
    reference_.push_back(reference);
  } else if (auto copy = copy_outside_allocator(reference)) {
    reference_.push_back(std::move(*copy));
  }
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
