#include "runner/measure/device_copy.hpp"

#include <ATen/ATen.h>
#include <cuda_runtime_api.h>

namespace attnsweep {

std::optional<at::Tensor> copy_outside_caching_allocator(const at::Tensor& tensor, bool cuda) {
  if (!cuda) return tensor;
  void* data = nullptr;
  if (cudaMalloc(&data, tensor.nbytes()) != cudaSuccess) {
    (void)cudaGetLastError();  // out of memory is not sticky; clear it
    return std::nullopt;
  }
  at::Tensor copy = at::from_blob(data, tensor.sizes(), [](void* pointer) { cudaFree(pointer); }, tensor.options());
  copy.copy_(tensor);
  return copy;
}

}  // namespace attnsweep
