#pragma once
// Times one forward. On CUDA: CUDA events around the forward on the current
// stream, with the device idle before the start event (one sample per forward);
// on the CPU: a steady clock. Both also record how long the call took to return.
#include <functional>
#include <memory>
#include <string>

#include "runner/measure/case_result.hpp"

namespace attnsweep {

class Timer {
 public:
  virtual ~Timer() = default;
  virtual TimingSample time(const std::function<void()>& forward) = 0;
  virtual std::string name() const = 0;  // cuda_event, steady_clock
};

std::unique_ptr<Timer> make_timer(const std::string& device);

// Waits for all work queued on the device (no-op on the CPU).
void synchronize_device(const std::string& device);

}  // namespace attnsweep
