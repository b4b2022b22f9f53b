#pragma once
// Facts about the machine and software, stored with every run.
#include <cstdint>
#include <string>

#include "runner/common/identities.hpp"

namespace attnsweep {

struct EnvironmentInfo {
  Device device;               // resolved: cpu or cuda:N
  std::string device_name;     // NVIDIA H200, or the CPU model
  std::string torch_version;
  std::string cuda_version;    // CUDA runtime in use; empty on a CPU run
  std::string cudnn_version;
  std::string driver_version;  // NVIDIA driver (NVML); empty when unknown
  std::string hostname;
  int sm_count = 0;
  std::int64_t device_memory_bytes = 0;
  std::int64_t l2_cache_bytes = 0;
  int sm_clock_max_mhz = 0;     // NVML; 0 when unknown
  std::string gpu_uuid;         // GPU-xxxxxxxx-...; the same whatever CUDA_VISIBLE_DEVICES numbers it; empty on CPU
  int cuda_device_count = 0;    // CUDA devices this process sees; 0 on a CPU run
  std::string container_image;  // ATTNSWEEP_IMAGE: the image attnsweep's container/Dockerfile built; empty outside
};

EnvironmentInfo collect_environment(const Device& device);

// The UUID of a CUDA device as nvidia-smi spells it (GPU-8-4-4-4-12 hex).
std::string gpu_uuid(const Device& device);

}  // namespace attnsweep
