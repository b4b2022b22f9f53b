#include "runner/device/ceilings.hpp"

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#include <c10/core/DeviceGuard.h>
#include <torch/csrc/autograd/grad_mode.h>

#include "runner/device/torch_device.hpp"

namespace attnsweep {
namespace {

// Median-free on purpose: one event pair around `repeats` back-to-back calls
// amortizes launch gaps, which is what a ceiling should exclude.
double seconds_per_call(const std::function<void()>& call, int repeats) {
  for (int i = 0; i < 3; ++i) call();
  auto stream = at::cuda::getCurrentCUDAStream();
  at::cuda::CUDAEvent start(cudaEventDefault), stop(cudaEventDefault);
  stream.synchronize();
  start.record(stream);
  for (int i = 0; i < repeats; ++i) call();
  stop.record(stream);
  stop.synchronize();
  return start.elapsed_time(stop) * 1e-3 / repeats;
}

}  // namespace

DeviceCeilings measure_ceilings(const Device& device) {
  DeviceCeilings ceilings;
  if (!device.is_cuda()) return ceilings;
  c10::OptionalDeviceGuard guard{torch_device(device)};  // braces: with parentheses this declared a function
  at::NoGradGuard no_grad;
  const auto options = at::TensorOptions().device(torch_device(device));
  {
    constexpr std::int64_t n = 8192;
    const at::Tensor a = at::randn({n, n}, options.dtype(at::kBFloat16));
    const at::Tensor b = at::randn({n, n}, options.dtype(at::kBFloat16));
    at::Tensor c = at::empty({n, n}, options.dtype(at::kBFloat16));
    const double seconds = seconds_per_call([&] { at::mm_out(c, a, b); }, 10);
    ceilings.bf16_tflops = 2.0 * n * n * n / seconds / 1e12;
  }
  {
    constexpr std::int64_t bytes = std::int64_t(1) << 30;
    const at::Tensor source = at::randint(0, 255, {bytes}, options.dtype(at::kByte));
    at::Tensor target = at::empty({bytes}, options.dtype(at::kByte));
    const double seconds = seconds_per_call([&] { target.copy_(source); }, 10);
    ceilings.copy_gbps = 2.0 * bytes / seconds / 1e9;
  }
  return ceilings;
}

}  // namespace attnsweep
