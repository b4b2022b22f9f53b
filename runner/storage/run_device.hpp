#pragma once
// One device a run measured on (run_devices, docs/schema.md): its environment
// and ceilings. Written and read through run_device_columns.
#include <optional>

#include "runner/device/environment.hpp"

namespace attnsweep::storage {

struct RunDevice {
  EnvironmentInfo environment;
  std::optional<double> ceiling_bf16_tflops, ceiling_copy_gbps;
};

}  // namespace attnsweep::storage
