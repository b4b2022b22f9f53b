#include "runner/measure/timer.hpp"

#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>

#include <chrono>

#include "runner/measure/device.hpp"

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
  CudaEventTimer() : start_(cudaEventDefault), stop_(cudaEventDefault) {}

  TimingSample time(const std::function<void()>& forward) override {
    auto stream = at::cuda::getCurrentCUDAStream();
    stream.synchronize();  // start from an idle device: one forward per sample
    start_.record(stream);
    const auto host_start = Clock::now();
    forward();
    const double dispatch = microseconds(Clock::now() - host_start);
    stop_.record(stream);
    stop_.synchronize();
    TimingSample sample;
    sample.gpu_time_us = start_.elapsed_time(stop_) * 1000.0;
    sample.host_dispatch_us = dispatch;
    return sample;
  }
  std::string name() const override { return "cuda_event"; }

 private:
  at::cuda::CUDAEvent start_, stop_;
};

}  // namespace

std::unique_ptr<Timer> make_timer(const std::string& device) {
  if (is_cuda_device(device)) return std::make_unique<CudaEventTimer>();
  return std::make_unique<SteadyClockTimer>();
}

void synchronize_device(const std::string& device) {
  if (is_cuda_device(device)) at::cuda::getCurrentCUDAStream().synchronize();
}

}  // namespace attnsweep
