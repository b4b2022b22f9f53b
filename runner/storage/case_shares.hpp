#pragma once
// A case's shares of the ceilings as the results view computes them (the
// ceilings its GPU measured, from run_devices, else the run's): the report's
// "of ceiling" columns.
#include <cstdint>
#include <optional>

namespace attnsweep::storage {

struct CaseShares {
  std::int64_t case_id = 0;
  std::optional<double> tflops_share, bandwidth_share, dram_bandwidth_share;
};

}  // namespace attnsweep::storage
