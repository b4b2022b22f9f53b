#pragma once
// Measures one case end to end: inputs, support check, numerics (accuracy),
// warm-up, timing with the stopping rule (sampling, graph_timing), profiling
// with consistent counts (consistent_profile), memory. The interface holds no
// LibTorch types, so the execute layer drives it without LibTorch headers.
#include <cstdint>
#include <memory>
#include <string>

#include "runner/config/measure_settings.hpp"
#include "runner/measure/case_result.hpp"
#include "runner/plan/case.hpp"

namespace attnsweep {

class CaseRunner {
 public:
  // `device` is resolved: cpu or cuda:N (runner/device/device.hpp).
  CaseRunner(const Device& device, MeasureSettings settings, std::uint64_t seed);
  ~CaseRunner();
  CaseRunner(const CaseRunner&) = delete;
  CaseRunner& operator=(const CaseRunner&) = delete;

  // Never throws for a case's own failure: unsupported, oom and error are results.
  CaseResult run(const Case& c, const std::string& trace_path = "");

 private:
  // Another process was seen on the GPU: no more burst cool-downs in this run.
  void stop_cooling_down();

  CaseResult measure_case(const Case& c, const std::string& trace_path);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace attnsweep
