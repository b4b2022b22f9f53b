#pragma once
// The device's own ceilings, measured once per run on the GPU being swept:
// a bf16 matrix product on random data and a device-to-device copy. Every
// case's TFLOP/s and bandwidth are then read against these (results view).
#include <optional>
#include <string>

#include "runner/common/identities.hpp"

namespace attnsweep {

struct DeviceCeilings {
  std::optional<double> bf16_tflops;  // 8192^3 bf16 matmul, 2*n^3 FLOPs per product
  std::optional<double> copy_gbps;    // 1 GiB copy, bytes read + written, 1e9 bytes/s
};

// Empty on the CPU.
DeviceCeilings measure_ceilings(const Device& device);

}  // namespace attnsweep
