#include "runner/device/device.hpp"

#include <ATen/Context.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAFunctions.h>
#include <unistd.h>

#include "runner/common/errors.hpp"

namespace attnsweep {

int cuda_device_count() { return at::hasCUDA() ? static_cast<int>(c10::cuda::device_count()) : 0; }

double device_memory_bytes(const Device& device) {
  if (device.is_cuda()) {
    return static_cast<double>(at::cuda::getDeviceProperties(device.cuda_index())->totalGlobalMem);
  }
  return static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGESIZE));
}

Device resolve_device(const Device& requested) {
  const int gpus = cuda_device_count();
  if (requested.is_auto()) return gpus > 0 ? Device::cuda(0) : Device::cpu();
  if (requested.is_cpu()) return Device::cpu();
  const int index = requested.cuda_index();
  if (gpus == 0) {
    throw BadInputError("device '" + requested.to_string() + "' asked for, but no CUDA device is available here; "
                        "use --device cpu or --device auto");
  }
  if (index >= gpus) {
    throw BadInputError("device '" + requested.to_string() + "' does not exist; this machine has " +
                        std::to_string(gpus) + " CUDA device(s): cuda:0 to cuda:" + std::to_string(gpus - 1));
  }
  return Device::cuda(index);
}

void synchronize_device(const Device& device) {
  if (device.is_cuda()) at::cuda::getCurrentCUDAStream(device.cuda_index()).synchronize();
}

}  // namespace attnsweep
