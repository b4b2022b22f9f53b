#include "runner/measure/timer.hpp"

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAException.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "runner/common/elapsed.hpp"
#include "runner/measure/blocking_kernel.hpp"
#include "runner/device/nvml.hpp"

namespace attnsweep {
namespace {

using Clock = std::chrono::steady_clock;

double microseconds(Clock::duration duration) {
  return std::chrono::duration<double, std::micro>(duration).count();
}

class SteadyClockTimer final : public Timer {
 public:
  TimingSample time(const std::function<void()>& forward) override {
    const auto start = Clock::now();
    forward();
    const double elapsed = microseconds(Clock::now() - start);
    TimingSample sample;
    sample.cpu_time_us = elapsed;
    sample.host_dispatch_us = elapsed;
    return sample;
  }
  std::string name() const override { return "steady_clock"; }
};

class CudaEventTimer final : public Timer {
 public:
  // Timing must be enabled: at::cuda::CUDAEvent defaults to cudaEventDisableTiming.
  CudaEventTimer(int device_index, bool l2_flush, bool hide_launch_latency)
      : start_(cudaEventDefault), stop_(cudaEventDefault), clock_(nvml::Device::of_cuda_device(device_index)),
        max_clock_(clock_.max_sm_clock_mhz()) {
    if (hide_launch_latency) blocker_ = std::make_unique<StreamBlocker>();
    if (l2_flush) {
      // At least twice the L2 (60 MB on H200), so nothing of the last sample survives.
      const std::int64_t l2 = at::cuda::getDeviceProperties(device_index)->l2CacheSize;
      flush_buffer_ = at::empty({std::max<std::int64_t>(2 * l2, 64 << 20)},
                                at::TensorOptions().device(at::Device(at::kCUDA, device_index)).dtype(at::kByte));
    }
  }

  TimingSample time(const std::function<void()>& forward) override {
    auto stream = at::cuda::getCurrentCUDAStream();
    stream.synchronize();  // start from an idle device: one forward per sample
    if (flush_buffer_.defined()) {
      // Queued before the start event: not timed. cudaMemsetAsync rather than
      // zero_(): 6 us of host time instead of 10 (bench/sample_cost.cpp).
      C10_CUDA_CHECK(cudaMemsetAsync(flush_buffer_.data_ptr(), 0, flush_buffer_.nbytes(), stream.stream()));
    }
    if (blocker_) blocker_->block(stream.stream(), kBlockTimeoutMs);
    start_.record(stream);
    const auto host_start = Clock::now();
    forward();
    const double dispatch = microseconds(Clock::now() - host_start);
    stop_.record(stream);
    if (blocker_) blocker_->release();
    stop_.synchronize();
    TimingSample sample;
    sample.blocked = blocker_ != nullptr;
    sample.block_timed_out = blocker_ && blocker_->timed_out();
    sample.gpu_time_us = start_.elapsed_time(stop_) * 1000.0;
    sample.host_dispatch_us = dispatch;
    sample.sm_clock_mhz = clock_.sm_clock_mhz();
    sample.clock_event_reasons = clock_.clock_event_reasons();
    return sample;
  }
  std::string name() const override { return "cuda_event"; }
  std::optional<int> max_sm_clock_mhz() const override { return max_clock_; }
  void stop_blocking() override { blocker_.reset(); }

  double cool_down(double max_seconds) override {
    if (!clock_.available()) return 0;
    const auto start = Clock::now();
    const auto ready = [&] {
      const auto reasons = clock_.clock_event_reasons();
      if (reasons && (*reasons & (nvml::reasons::kPowerCap | nvml::reasons::kThermalCap))) return false;
      if (reasons && (*reasons & nvml::reasons::kGpuIdle)) return true;  // idle clocks rise with the next launch
      const auto clock = clock_.sm_clock_mhz();
      return !clock || !max_clock_ || *clock >= kClockReadyFraction * *max_clock_;
    };
    // NVML refreshes clocks and reasons every few milliseconds: poll at 1 ms.
    while (!ready() && seconds_since(start) < max_seconds) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return seconds_since(start);
  }

 private:
  // Far above any host enqueue time of one forward; reached only when the
  // forward waits for the GPU, which the blocked stream cannot serve.
  static constexpr double kBlockTimeoutMs = 100;
  // The clock counts as back at its maximum within one boost step (15 MHz of 1980 on the H200).
  static constexpr double kClockReadyFraction = 0.99;
  std::unique_ptr<StreamBlocker> blocker_;
  at::cuda::CUDAEvent start_, stop_;
  nvml::Device clock_;
  std::optional<int> max_clock_;  // read once: asked for every sample's throttle check
  at::Tensor flush_buffer_;
};

}  // namespace

std::unique_ptr<Timer> make_timer(const Device& device, bool l2_flush, bool hide_launch_latency) {
  if (device.is_cuda()) return std::make_unique<CudaEventTimer>(device.cuda_index(), l2_flush, hide_launch_latency);
  return std::make_unique<SteadyClockTimer>();
}

}  // namespace attnsweep
