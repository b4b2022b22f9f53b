#include "runner/measure/device.hpp"

#include <ATen/Context.h>
#include <c10/cuda/CUDAFunctions.h>

#include <ATen/cuda/CUDAContext.h>
#include <unistd.h>

#include "runner/common/device_name.hpp"
#include "runner/common/errors.hpp"

namespace attnsweep {

int cuda_device_count() { return at::hasCUDA() ? static_cast<int>(c10::cuda::device_count()) : 0; }

bool is_cuda_device(const std::string& device) { return device.rfind("cuda", 0) == 0; }

int cuda_device_index(const std::string& device) {
  if (!is_cuda_device(device)) return -1;
  return device == "cuda" ? 0 : std::stoi(device.substr(5));
}

double device_memory_bytes(const std::string& device) {
  if (is_cuda_device(device)) {
    return static_cast<double>(at::cuda::getDeviceProperties(cuda_device_index(device))->totalGlobalMem);
  }
  return static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGESIZE));
}

std::string resolve_device(const std::string& requested) {
  check_device_name(requested);
  const int gpus = cuda_device_count();
  if (requested == "auto") return gpus > 0 ? "cuda:0" : "cpu";
  if (requested == "cpu") return "cpu";
  const int index = cuda_device_index(requested);
  if (gpus == 0) {
    throw BadInputError("device '" + requested + "' asked for, but no CUDA device is available here; "
                        "use --device cpu or --device auto");
  }
  if (index >= gpus) {
    throw BadInputError("device '" + requested + "' does not exist; this machine has " + std::to_string(gpus) +
                        " CUDA device(s): cuda:0 to cuda:" + std::to_string(gpus - 1));
  }
  return "cuda:" + std::to_string(index);
}

}  // namespace attnsweep
