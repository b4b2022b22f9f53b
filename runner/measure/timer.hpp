#pragma once
// Times one forward (or one graph replay). On CUDA: the stream is drained, the
// L2 cache flushed (a memset of twice its size, before the start event, so
// outside the interval), then CUDA events around the call, then the SM clock
// read through NVML. On the CPU: a steady clock. Both also record how long the
// call took to return on the host.
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "runner/measure/case_result.hpp"

namespace attnsweep {

class Timer {
 public:
  virtual ~Timer() = default;
  virtual TimingSample time(const std::function<void()>& forward) = 0;
  virtual std::string name() const = 0;                 // cuda_event, steady_clock
  virtual std::optional<int> max_sm_clock_mhz() const { return std::nullopt; }
};

std::unique_ptr<Timer> make_timer(const std::string& device, bool l2_flush);

// Waits for all work queued on the device (no-op on the CPU).
void synchronize_device(const std::string& device);

}  // namespace attnsweep
