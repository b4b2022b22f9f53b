#include "runner/device/environment.hpp"

#include <ATen/cuda/CUDAContext.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <cuda_runtime_api.h>
#include <torch/version.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <initializer_list>

#include "runner/device/device.hpp"
#include "runner/device/gpu_sharing.hpp"
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

bool result_changing_variable(const std::string& name) {
  // Whole names, then prefixes (a trailing '_' or a family name).
  for (const char* exact : {"CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "CUDA_LAUNCH_BLOCKING",
                            "CUDA_MODULE_LOADING", "CUDA_DEVICE_MAX_CONNECTIONS", "NVIDIA_TF32_OVERRIDE",
                            "CUBLAS_WORKSPACE_CONFIG", "PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_NO_CUDA_MEMORY_CACHING",
                            "OMP_NUM_THREADS", "MKL_NUM_THREADS"}) {
    if (name == exact) return true;
  }
  for (const char* prefix : {"TORCH_CUDNN_", "CUDNN_", "CUBLAS", "TORCH_ALLOW_TF32", "TORCH_BLAS_", "TORCH_SDPA_",
                             "TORCH_NCCL_", "ATTNSWEEP_TEST_", "ATTNSWEEP_COUNTER_"}) {
    if (name.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

std::map<std::string, std::string> result_changing_environment() {
  std::map<std::string, std::string> variables;
  for (char** entry = environ; entry && *entry; ++entry) {
    const std::string text = *entry;
    const auto equals = text.find('=');
    if (equals == std::string::npos) continue;
    const std::string name = text.substr(0, equals);
    if (result_changing_variable(name)) variables[name] = text.substr(equals + 1);
  }
  return variables;
}

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
  info.env_vars = result_changing_environment();
  const auto& hooks = at::detail::getCUDAHooks();
  if (hooks.hasCuDNN()) info.cudnn_version = std::to_string(hooks.versionCuDNN());
  int loaded_runtime = 0;
  if (cudaRuntimeGetVersion(&loaded_runtime) == cudaSuccess && loaded_runtime > 0) {
    info.cuda_runtime_version = dotted_version(loaded_runtime, 1000, 10);
  }
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
  const nvml::Device gpu = nvml::Device::of_cuda_device(index);
  info.sm_clock_max_mhz = gpu.max_sm_clock_mhz().value_or(0);
  info.power_limit_w = gpu.power_limit_w().value_or(0);
  info.sm_clock_start_mhz = gpu.sm_clock_mhz().value_or(0);
  info.mem_clock_start_mhz = gpu.memory_clock_mhz().value_or(0);
  info.temperature_start_c = gpu.temperature_c().value_or(0);
  info.clock_event_reasons_start = gpu.clock_event_reasons().value_or(0);
  const GpuSharing sharing = read_gpu_sharing(device);
  info.other_processes_start = sharing.other_processes.value_or(-1);
  info.gpu_utilization_start_pct = sharing.utilization_pct.value_or(-1);
  info.gpu_uuid = gpu_uuid(device);
  info.cuda_device_count = hooks.getNumGPUs();
  return info;
}

}  // namespace attnsweep
