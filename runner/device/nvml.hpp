#pragma once
// The few NVML calls attnsweep needs (driver version, SM clocks), through
// libnvidia-ml loaded at run time: the binary runs without it, and NVML reads
// clocks without touching the CUDA context. attnsweep only reads clocks.
#include <optional>
#include <string>

namespace attnsweep::nvml {

std::string driver_version();  // empty when NVML is unavailable

// One GPU, found by its PCI bus id (NVML and CUDA may number devices differently).
class Device {
 public:
  explicit Device(const std::string& pci_bus_id);
  static Device of_cuda_device(int cuda_index);  // unavailable if CUDA cannot name its bus id
  bool available() const { return handle_ != nullptr; }
  std::optional<double> sm_clock_mhz() const;      // current SM clock
  std::optional<int> max_sm_clock_mhz() const;     // the highest the SM clock can go

 private:
  void* handle_ = nullptr;
};

}  // namespace attnsweep::nvml
