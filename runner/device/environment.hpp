#pragma once
// Facts about the machine and software, stored with every run.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "runner/common/identities.hpp"

namespace attnsweep {

struct EnvironmentInfo {
  Device device;               // resolved: cpu or cuda:N
  std::string device_name;     // NVIDIA H200, or the CPU model
  std::string torch_version;
  std::string cuda_version;    // CUDA runtime in use; empty on a CPU run
  // The CUDA runtime LibTorch loaded (cudaRuntimeGetVersion), known without a GPU:
  // what an image's CUDA is. Shown by `attnsweep env`, not stored.
  std::string cuda_runtime_version;
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
  // The GPU's state when the process started measuring (NVML; 0 when unknown):
  // what a run-to-run difference is explained by before anything else.
  double power_limit_w = 0;             // enforced power limit
  double sm_clock_start_mhz = 0;        // current SM clock
  double mem_clock_start_mhz = 0;    // current memory clock
  double temperature_start_c = 0;       // GPU core temperature
  std::uint64_t clock_event_reasons_start = 0;  // nvml::reasons bits
  // Other compute processes on the GPU and its utilization when the process
  // started measuring (gpu_sharing.hpp); -1 when unknown (CPU, no NVML).
  int other_processes_start = -1;
  double gpu_utilization_start_pct = -1;
  // The environment variables that change results (result_changing_variable()), as set.
  std::map<std::string, std::string> env_vars;
};

// Whether an environment variable of this name can change what attnsweep
// measures: cuDNN, cuBLAS, TF32, device visibility, allocator, threads and
// attnsweep's own test knobs (docs/schema.md lists the names and prefixes).
bool result_changing_variable(const std::string& name);
// The result-changing variables of this process's environment, by name.
std::map<std::string, std::string> result_changing_environment();

EnvironmentInfo collect_environment(const Device& device);

// The UUID of a CUDA device as nvidia-smi spells it (GPU-8-4-4-4-12 hex).
std::string gpu_uuid(const Device& device);

}  // namespace attnsweep
