#pragma once
// The few NVML calls attnsweep needs (driver version, clocks, clock event
// reasons, power limit, temperature, the energy counter), through libnvidia-ml loaded at run time:
// the binary runs without it, and NVML reads clocks without touching the CUDA
// context. attnsweep only reads; it never sets clocks or limits.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace attnsweep::nvml {

// nvmlClocksEventReasons bits (nvml.h, NVML_CLOCKS_EVENT_REASON_*): why the
// clocks are below their maximum. Stored as they are in samples.clock_event_reasons.
namespace reasons {
inline constexpr std::uint64_t kGpuIdle = 0x1;
inline constexpr std::uint64_t kApplicationsClocksSetting = 0x2;
inline constexpr std::uint64_t kSwPowerCap = 0x4;
inline constexpr std::uint64_t kHwSlowdown = 0x8;  // thermal or power brake, set by hardware
inline constexpr std::uint64_t kSyncBoost = 0x10;
inline constexpr std::uint64_t kSwThermalSlowdown = 0x20;
inline constexpr std::uint64_t kHwThermalSlowdown = 0x40;
inline constexpr std::uint64_t kHwPowerBrakeSlowdown = 0x80;
inline constexpr std::uint64_t kDisplayClockSetting = 0x100;
// A power cap: the driver's software cap or the hardware power brake.
inline constexpr std::uint64_t kPowerCap = kSwPowerCap | kHwPowerBrakeSlowdown;
// A thermal cap: software or hardware thermal slowdown, or a hardware slowdown
// (which NVML reports for thermal and power-brake events alike).
inline constexpr std::uint64_t kThermalCap = kSwThermalSlowdown | kHwThermalSlowdown | kHwSlowdown;
// The set bits by nvidia-smi's names (gpu_idle, sw_power_cap, ...); unknown bits as 0x... .
std::vector<std::string> names(std::uint64_t bits);
}  // namespace reasons

std::string driver_version();  // empty when NVML is unavailable

// One GPU, found by its PCI bus id (NVML and CUDA may number devices differently).
class Device {
 public:
  explicit Device(const std::string& pci_bus_id);
  static Device of_cuda_device(int cuda_index);  // unavailable if CUDA cannot name its bus id
  bool available() const { return handle_ != nullptr; }
  std::optional<double> sm_clock_mhz() const;      // current SM clock
  std::optional<int> max_sm_clock_mhz() const;     // the highest the SM clock can go
  std::optional<double> memory_clock_mhz() const;  // current memory clock
  // The reasons bits above, as NVML reports them now (nvmlDeviceGetCurrentClocksEventReasons,
  // or the older ...ThrottleReasons on drivers without it).
  std::optional<std::uint64_t> clock_event_reasons() const;
  std::optional<double> power_limit_w() const;     // the enforced power limit
  std::optional<double> temperature_c() const;     // GPU core temperature
  // The processes with a compute context on this GPU, by the PIDs the driver
  // knows them by (the host's: inside a container they differ from getpid()).
  std::optional<std::vector<unsigned>> compute_process_ids() const;
  // Percent of NVML's last sample period (1/6 s to 1 s) in which a kernel ran, any process's.
  std::optional<unsigned> utilization_percent() const;
  // The GPU's energy counter: millijoules since the driver was loaded
  // (nvmlDeviceGetTotalEnergyConsumption, Volta and later). Empty where the
  // driver lacks the call or the GPU the counter. It advances in steps (docs/
  // measurement.md, "Energy"): a difference means something only between two steps.
  std::optional<std::uint64_t> total_energy_mj() const;

 private:
  void* handle_ = nullptr;
};

}  // namespace attnsweep::nvml
