#pragma once
// Measures one case end to end: inputs, support check, numerics, warm-up,
// timing with the stopping rule, profiling with consistent counts, memory.
// The interface holds no LibTorch types, so the CLI (and later a worker
// process) can drive it without LibTorch headers.
#include <cstdint>
#include <memory>
#include <string>

#include "runner/config/measure_settings.hpp"
#include "runner/measure/case_result.hpp"
#include "runner/plan/case.hpp"

namespace attnsweep {

class CaseRunner {
 public:
  // `device` is resolved ("cpu" or "cuda:N", see device.hpp).
  CaseRunner(std::string device, MeasureSettings settings, std::uint64_t seed);
  ~CaseRunner();
  CaseRunner(const CaseRunner&) = delete;
  CaseRunner& operator=(const CaseRunner&) = delete;

  // Never throws for a case's own failure: unsupported, oom and error are results.
  CaseResult run(const Case& c, const std::string& trace_path = "");

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace attnsweep
