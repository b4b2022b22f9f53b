#pragma once
// A copy of a tensor kept across cases (a float64 reference) in memory of its
// own: on CUDA through cudaMalloc, outside PyTorch's caching allocator, so it is
// not counted in the next cases' peak_mem_bytes. Empty when the device has no
// room (the caller then recomputes instead of keeping). On the CPU the tensor itself.
#include <ATen/core/Tensor.h>

#include <optional>

namespace attnsweep {

std::optional<at::Tensor> copy_outside_caching_allocator(const at::Tensor& tensor, bool cuda);

}  // namespace attnsweep
