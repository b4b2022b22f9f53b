#include "runner/device/nvml.hpp"

#include <cuda_runtime_api.h>
#include <dlfcn.h>

namespace attnsweep::nvml {
namespace {

constexpr int kClockSm = 1;  // NVML_CLOCK_SM

struct Library {
  void* handle = nullptr;
  int (*init)() = nullptr;
  int (*system_driver_version)(char*, unsigned) = nullptr;
  int (*handle_by_pci_bus_id)(const char*, void**) = nullptr;
  int (*clock_info)(void*, int, unsigned*) = nullptr;
  int (*max_clock_info)(void*, int, unsigned*) = nullptr;
  bool ready = false;

  Library() {
    handle = dlopen("libnvidia-ml.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (!handle) return;
    init = reinterpret_cast<int (*)()>(dlsym(handle, "nvmlInit_v2"));
    system_driver_version = reinterpret_cast<int (*)(char*, unsigned)>(dlsym(handle, "nvmlSystemGetDriverVersion"));
    handle_by_pci_bus_id = reinterpret_cast<int (*)(const char*, void**)>(dlsym(handle, "nvmlDeviceGetHandleByPciBusId_v2"));
    clock_info = reinterpret_cast<int (*)(void*, int, unsigned*)>(dlsym(handle, "nvmlDeviceGetClockInfo"));
    max_clock_info = reinterpret_cast<int (*)(void*, int, unsigned*)>(dlsym(handle, "nvmlDeviceGetMaxClockInfo"));
    ready = init && system_driver_version && handle_by_pci_bus_id && clock_info && max_clock_info && init() == 0;
  }
};

// Loaded once and kept for the process: NVML calls per sample must be cheap.
const Library& library() {
  static const Library instance;
  return instance;
}

}  // namespace

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

}  // namespace attnsweep::nvml
