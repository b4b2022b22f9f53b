#pragma once
// Our Device as LibTorch's at::Device, for the code that touches tensors.
#include <c10/core/Device.h>

#include "runner/common/identities.hpp"

namespace attnsweep {

// A resolved device (cpu or cuda:N); plain "cuda" maps to cuda:0.
inline at::Device torch_device(const Device& device) {
  if (device.is_cuda()) return at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(device.cuda_index()));
  return at::Device(at::kCPU);
}

}  // namespace attnsweep
