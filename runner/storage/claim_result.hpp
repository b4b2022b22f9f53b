#pragma once
// A stored claim beside what the run measured of its case (the claim_results
// view, docs/schema.md): what the report's and compare's claims table is made of.
#include <optional>
#include <string>

#include "runner/storage/claim_row.hpp"

namespace attnsweep::storage {

struct ClaimResult : ClaimRow {
  std::string status, error_message;  // the case's; empty when it is not stored
  std::optional<double> measured_tflops, measured_time_us, ratio;  // ratio: the view's claim_ratio
  std::string validity, validity_reasons;
  // The device that ran the case (its run_devices row, else the run's) and the case's clocks.
  std::string device_name;
  std::optional<double> sm_clock_mhz_mean, sm_clock_max_mhz, power_cap_share, thermal_cap_share, power_limit_w;
  std::string torch_version, cuda_version, cudnn_version;
};

}  // namespace attnsweep::storage
