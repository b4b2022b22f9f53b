#include "runner/device/gpu_sharing.hpp"

#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime_api.h>
#include <unistd.h>

#include "runner/device/nvml.hpp"

namespace attnsweep {

GpuSharing read_gpu_sharing(const Device& device) {
  GpuSharing sharing;
  if (!device.is_cuda()) return sharing;
  const int index = device.cuda_index();
  // The primary context (the one LibTorch uses) exists from here on, so this
  // process is among the GPU's processes: other_processes_than_self counts on it.
  // LibTorch's guard switches back only to a device that already has a context
  // (MaybeSetDevice): a plain cudaSetDevice back to device 0 would create one
  // there, and every worker of a --gpus run would show up on GPU 0.
  try {
    const c10::cuda::CUDAGuard on_the_gpu(static_cast<c10::DeviceIndex>(index));
    if (cudaFree(nullptr) != cudaSuccess) {
      (void)cudaGetLastError();
      return sharing;
    }
  } catch (const std::exception&) {
    return sharing;
  }
  const nvml::Device gpu = nvml::Device::of_cuda_device(index);
  if (const auto pids = gpu.compute_process_ids()) {
    sharing.other_processes = other_processes_than_self(*pids, static_cast<unsigned>(getpid()));
  }
  if (const auto percent = gpu.utilization_percent()) sharing.utilization_pct = *percent;
  return sharing;
}

}  // namespace attnsweep
