#pragma once
// The counter pass of a case (measure.counters, issue 39; docs/measurement.md,
// "Counters"): after the profile phase, L2 emptied of the last pass, the pass runs
// once more under CUPTI's range profiler (runner/device/cupti_counters), which
// replays each kernel as often as its counters need. Its figures go to the
// case (per pass) and to its kernels (per name); a time is never taken from it.
// Set up at the first case that asks; what CUPTI cannot do is a reason, per case.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runner/device/device.hpp"
#include "runner/measure/case_result.hpp"

namespace attnsweep {

class CounterPass {
 public:
  CounterPass(Device device, std::vector<std::string> counters);
  ~CounterPass();
  CounterPass(const CounterPass&) = delete;
  CounterPass& operator=(const CounterPass&) = delete;

  bool asked() const { return !counters_.empty(); }
  // Runs `before` (untimed work, e.g. a backward's forward), flushes the L2, runs
  // `call` under the profiler and fills result.counters (and each kernel's counters
  // in result.profile), or result.counters_why_not.
  void measure(const std::function<void()>& before, const std::function<void()>& call, CaseResult& result);

 private:
  struct State;
  Device device_;
  std::vector<std::string> counters_;
  std::unique_ptr<State> state_;
};

}  // namespace attnsweep
