#pragma once
// Runs cases in this process, one after another, through one CaseRunner made
// at the first case (so a sweep whose cases are all stored already draws no
// inputs and makes no timer).
#include <cstdint>
#include <memory>

#include "runner/config/measure_settings.hpp"
#include "runner/execute/executor.hpp"
#include "runner/measure/case_runner.hpp"

namespace attnsweep::execute {

class InProcessExecutor final : public Executor {
 public:
  InProcessExecutor(const Device& device, const MeasureSettings& settings, std::uint64_t seed)
      : device_(device), settings_(settings), seed_(seed) {}
  void begin(CaseQueue queue) override;
  CaseEvent next() override;

 private:
  Device device_;
  MeasureSettings settings_;
  std::uint64_t seed_;
  std::unique_ptr<CaseRunner> runner_;
  std::deque<QueuedCase> cases_;
  bool announced_ = false;  // the front case's `started` was reported
};

}  // namespace attnsweep::execute
