#include "runner/device/nvml.hpp"

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <cstdio>
#include <utility>

namespace attnsweep::nvml {
namespace {

constexpr int kClockSm = 1;   // NVML_CLOCK_SM
constexpr int kClockMem = 2;  // NVML_CLOCK_MEM
constexpr int kTemperatureGpu = 0;  // NVML_TEMPERATURE_GPU

constexpr int kInsufficientSize = 7;  // NVML_ERROR_INSUFFICIENT_SIZE

// nvmlProcessInfo_t as the _v2 and _v3 process queries fill it (nvml.h).
struct ProcessInfo {
  unsigned pid;
  unsigned long long used_gpu_memory;
  unsigned gpu_instance_id;
  unsigned compute_instance_id;
};
struct Utilization {  // nvmlUtilization_t
  unsigned gpu, memory;
};

template <typename Function>
Function symbol(void* handle, const char* name) {
  return reinterpret_cast<Function>(dlsym(handle, name));
}

struct Library {
  void* handle = nullptr;
  int (*init)() = nullptr;
  int (*system_driver_version)(char*, unsigned) = nullptr;
  int (*handle_by_pci_bus_id)(const char*, void**) = nullptr;
  int (*clock_info)(void*, int, unsigned*) = nullptr;
  int (*max_clock_info)(void*, int, unsigned*) = nullptr;
  // Optional: older drivers lack the first, newer ones may drop the second.
  int (*clock_event_reasons)(void*, unsigned long long*) = nullptr;
  int (*enforced_power_limit)(void*, unsigned*) = nullptr;  // milliwatts
  int (*temperature)(void*, int, unsigned*) = nullptr;
  int (*compute_processes)(void*, unsigned*, ProcessInfo*) = nullptr;
  int (*utilization)(void*, Utilization*) = nullptr;
  int (*total_energy)(void*, unsigned long long*) = nullptr;  // millijoules
  bool ready = false;

  Library() {
    handle = dlopen("libnvidia-ml.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (!handle) return;
    init = symbol<int (*)()>(handle, "nvmlInit_v2");
    system_driver_version = symbol<int (*)(char*, unsigned)>(handle, "nvmlSystemGetDriverVersion");
    handle_by_pci_bus_id = symbol<int (*)(const char*, void**)>(handle, "nvmlDeviceGetHandleByPciBusId_v2");
    clock_info = symbol<int (*)(void*, int, unsigned*)>(handle, "nvmlDeviceGetClockInfo");
    max_clock_info = symbol<int (*)(void*, int, unsigned*)>(handle, "nvmlDeviceGetMaxClockInfo");
    clock_event_reasons = symbol<int (*)(void*, unsigned long long*)>(handle, "nvmlDeviceGetCurrentClocksEventReasons");
    if (!clock_event_reasons) {
      clock_event_reasons =
          symbol<int (*)(void*, unsigned long long*)>(handle, "nvmlDeviceGetCurrentClocksThrottleReasons");
    }
    enforced_power_limit = symbol<int (*)(void*, unsigned*)>(handle, "nvmlDeviceGetEnforcedPowerLimit");
    temperature = symbol<int (*)(void*, int, unsigned*)>(handle, "nvmlDeviceGetTemperature");
    // _v2 first: its entries are these 24 bytes on every driver; some R530-era
    // drivers filled _v3 with 32-byte entries (nvitop checks for them).
    compute_processes = symbol<int (*)(void*, unsigned*, ProcessInfo*)>(handle, "nvmlDeviceGetComputeRunningProcesses_v2");
    if (!compute_processes) {
      compute_processes = symbol<int (*)(void*, unsigned*, ProcessInfo*)>(handle, "nvmlDeviceGetComputeRunningProcesses_v3");
    }
    utilization = symbol<int (*)(void*, Utilization*)>(handle, "nvmlDeviceGetUtilizationRates");
    total_energy = symbol<int (*)(void*, unsigned long long*)>(handle, "nvmlDeviceGetTotalEnergyConsumption");
    ready = init && system_driver_version && handle_by_pci_bus_id && clock_info && max_clock_info && init() == 0;
  }
};

// Loaded once and kept for the process: NVML calls per sample must be cheap.
const Library& library() {
  static const Library instance;
  return instance;
}

}  // namespace

std::vector<std::string> reasons::names(std::uint64_t bits) {
  static const std::pair<std::uint64_t, const char*> known[] = {
      {kGpuIdle, "gpu_idle"},
      {kApplicationsClocksSetting, "applications_clocks_setting"},
      {kSwPowerCap, "sw_power_cap"},
      {kHwSlowdown, "hw_slowdown"},
      {kSyncBoost, "sync_boost"},
      {kSwThermalSlowdown, "sw_thermal_slowdown"},
      {kHwThermalSlowdown, "hw_thermal_slowdown"},
      {kHwPowerBrakeSlowdown, "hw_power_brake_slowdown"},
      {kDisplayClockSetting, "display_clock_setting"}};
  std::vector<std::string> set;
  for (const auto& [bit, name] : known) {
    if (bits & bit) set.push_back(name);
    bits &= ~bit;
  }
  if (bits) {
    char text[24];
    std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(bits));
    set.push_back(text);
  }
  return set;
}

std::string driver_version() {
  const Library& nvml = library();
  if (!nvml.ready) return "";
  char buffer[96] = {};
  return nvml.system_driver_version(buffer, sizeof buffer) == 0 ? std::string(buffer) : std::string();
}

Device::Device(const std::string& pci_bus_id) {
  const Library& nvml = library();
  if (nvml.ready && nvml.handle_by_pci_bus_id(pci_bus_id.c_str(), &handle_) != 0) handle_ = nullptr;
}

Device Device::of_cuda_device(int cuda_index) {
  char bus_id[32] = {};
  if (cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, cuda_index) != cudaSuccess) return Device("");
  return Device(bus_id);
}

std::optional<double> Device::sm_clock_mhz() const {
  unsigned mhz = 0;
  if (!handle_ || library().clock_info(handle_, kClockSm, &mhz) != 0) return std::nullopt;
  return static_cast<double>(mhz);
}

std::optional<int> Device::max_sm_clock_mhz() const {
  unsigned mhz = 0;
  if (!handle_ || library().max_clock_info(handle_, kClockSm, &mhz) != 0) return std::nullopt;
  return static_cast<int>(mhz);
}

std::optional<double> Device::memory_clock_mhz() const {
  unsigned mhz = 0;
  if (!handle_ || library().clock_info(handle_, kClockMem, &mhz) != 0) return std::nullopt;
  return static_cast<double>(mhz);
}

std::optional<std::uint64_t> Device::clock_event_reasons() const {
  unsigned long long bits = 0;
  if (!handle_ || !library().clock_event_reasons || library().clock_event_reasons(handle_, &bits) != 0) {
    return std::nullopt;
  }
  return static_cast<std::uint64_t>(bits);
}

std::optional<double> Device::power_limit_w() const {
  unsigned milliwatts = 0;
  if (!handle_ || !library().enforced_power_limit || library().enforced_power_limit(handle_, &milliwatts) != 0) {
    return std::nullopt;
  }
  return milliwatts / 1000.0;
}

std::optional<double> Device::temperature_c() const {
  unsigned celsius = 0;
  if (!handle_ || !library().temperature || library().temperature(handle_, kTemperatureGpu, &celsius) != 0) {
    return std::nullopt;
  }
  return static_cast<double>(celsius);
}

std::optional<std::vector<unsigned>> Device::compute_process_ids() const {
  if (!handle_ || !library().compute_processes) return std::nullopt;
  std::vector<ProcessInfo> infos(16);
  for (int attempt = 0; attempt < 4; ++attempt) {
    unsigned count = static_cast<unsigned>(infos.size());
    const int status = library().compute_processes(handle_, &count, infos.data());
    if (status == 0) {
      std::vector<unsigned> ids;
      for (unsigned i = 0; i < count && i < infos.size(); ++i) ids.push_back(infos[i].pid);
      return ids;
    }
    if (status != kInsufficientSize) return std::nullopt;
    infos.resize(static_cast<std::size_t>(count) + 16);  // more processes came meanwhile: room for them
  }
  return std::nullopt;
}

std::optional<unsigned> Device::utilization_percent() const {
  Utilization rates{};
  if (!handle_ || !library().utilization || library().utilization(handle_, &rates) != 0) return std::nullopt;
  return rates.gpu;
}

std::optional<std::uint64_t> Device::total_energy_mj() const {
  unsigned long long millijoules = 0;
  if (!handle_ || !library().total_energy || library().total_energy(handle_, &millijoules) != 0) return std::nullopt;
  return static_cast<std::uint64_t>(millijoules);
}

}  // namespace attnsweep::nvml
