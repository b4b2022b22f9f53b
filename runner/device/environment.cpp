#include "runner/device/environment.hpp"

#include <ATen/cuda/CUDAContext.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <cuda_runtime_api.h>
#include <torch/version.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "runner/device/device.hpp"
#include "runner/device/nvml.hpp"

namespace attnsweep {
namespace {

std::string dotted_version(int packed, int major_divisor, int minor_divisor) {
  return std::to_string(packed / major_divisor) + "." + std::to_string((packed % major_divisor) / minor_divisor);
}

std::string cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  }
  return "cpu";
}

}  // namespace

std::string gpu_uuid(const Device& device) {
  if (!device.is_cuda()) return "";
  const cudaDeviceProp* properties = at::cuda::getDeviceProperties(device.cuda_index());
  const auto* bytes = reinterpret_cast<const unsigned char*>(properties->uuid.bytes);
  std::string text = "GPU-";
  const char* digits = "0123456789abcdef";
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) text += '-';
    text += digits[bytes[i] >> 4];
    text += digits[bytes[i] & 0xF];
  }
  return text;
}

EnvironmentInfo collect_environment(const Device& device) {
  EnvironmentInfo info;
  info.device = device;
  info.torch_version = TORCH_VERSION;
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) info.hostname = host;
  if (const char* image = std::getenv("ATTNSWEEP_IMAGE")) info.container_image = image;
  const auto& hooks = at::detail::getCUDAHooks();
  if (hooks.hasCuDNN()) info.cudnn_version = std::to_string(hooks.versionCuDNN());
  if (!device.is_cuda()) {
    info.device_name = cpu_model();
    return info;
  }
  const int index = device.cuda_index();
  const cudaDeviceProp* properties = at::cuda::getDeviceProperties(index);
  info.device_name = properties->name;
  info.sm_count = properties->multiProcessorCount;
  info.device_memory_bytes = static_cast<std::int64_t>(properties->totalGlobalMem);
  info.l2_cache_bytes = properties->l2CacheSize;
  int runtime = 0;
  if (cudaRuntimeGetVersion(&runtime) == cudaSuccess) info.cuda_version = dotted_version(runtime, 1000, 10);
  info.driver_version = nvml::driver_version();
  info.sm_clock_max_mhz = nvml::Device::of_cuda_device(index).max_sm_clock_mhz().value_or(0);
  info.gpu_uuid = gpu_uuid(device);
  info.cuda_device_count = hooks.getNumGPUs();
  return info;
}

}  // namespace attnsweep
