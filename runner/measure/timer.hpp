#pragma once
// Times one forward (or one graph replay). On CUDA: the stream is drained, the
// L2 cache flushed (a memset of twice its size, before the start event, so
// outside the interval), the stream held by a blocking kernel while the host
// enqueues start event, forward and stop event (so launch latency stays out of
// the interval), then released; then the SM clock is read through NVML. On the
// CPU: a steady clock. Both also record how long the call took to return.
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
  // Turns the blocking kernel off, e.g. for a forward that synchronizes.
  virtual void stop_blocking() {}
  // The burst regime's cool-down before a sample: waits while NVML reports a
  // power or thermal cap or the SM clock is under its maximum (an idle GPU
  // counts as ready), at most max_seconds. Returns the seconds waited; 0 where
  // there is nothing to wait for (the CPU, no NVML).
  virtual double cool_down(double max_seconds) {
    (void)max_seconds;
    return 0;
  }
};

std::unique_ptr<Timer> make_timer(const Device& device, bool l2_flush, bool hide_launch_latency);

}  // namespace attnsweep
