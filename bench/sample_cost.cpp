// What one timed sample costs in wall time, piece by piece, for orderings of
// the timing protocol's parts (sync, L2 flush, blocking kernel, events, NVML).
// A bench tool for docs/benchmarks.md, not part of attnsweep run:
//   build/attnsweep_sample_cost [samples] [variant] [BxHxSxD] [dtype]
// Prints one JSON object per protocol: wall time per sample (median, mean),
// the event time (median) and the host time of each step (medians), in us.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime_api.h>
#include <torch/csrc/autograd/grad_mode.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "runner/common/text.hpp"
#include "runner/measure/blocking_kernel.hpp"
#include "runner/device/device.hpp"
#include "runner/measure/inputs.hpp"
#include "runner/device/nvml.hpp"
#include "runner/measure/statistics.hpp"
#include "runner/measure/timer.hpp"
#include "runner/profile/kineto_profiler.hpp"
#include "runner/variants/registry.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double us_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}

// One protocol = an ordered list of steps; "fwd" sits between the events.
struct Protocol {
  std::string name;
  std::vector<std::string> steps;
};

}  // namespace

int main(int argc, char** argv) {
  using namespace attnsweep;
  const int samples = argc > 1 ? std::stoi(argv[1]) : 500;
  const std::string variant_name = argc > 2 ? argv[2] : "sdpa_cudnn";
  const std::string shape_text = argc > 3 ? argv[3] : "16x16x512x64";
  const std::string dtype = argc > 4 ? argv[4] : "bf16";

  Case c;
  c.variant = variant_name;
  if (!parse_dtype(dtype)) {
    std::fprintf(stderr, "unknown dtype '%s'; allowed: %s\n", dtype.c_str(), text::join(dtype_names(), ", ").c_str());
    return 2;
  }
  c.dtype = *parse_dtype(dtype);
  if (std::sscanf(shape_text.c_str(), "%ldx%ldx%ldx%ld", &c.shape.batch, &c.shape.heads, &c.shape.seq_len_q,
                  &c.shape.head_dim) != 4 || c.shape.batch < 1 || c.shape.heads < 1 || c.shape.seq_len_q < 1 ||
      c.shape.head_dim < 1) {
    std::fprintf(stderr, "shape '%s': expected BxHxSxD with positive sizes, e.g. 16x16x512x64\n", shape_text.c_str());
    return 2;
  }
  c.shape.kv_heads = c.shape.heads;
  c.shape.seq_len_kv = c.shape.seq_len_q;
  if (cuda_device_count() == 0) {
    std::fprintf(stderr, "attnsweep_sample_cost needs a CUDA device; there is none here\n");
    return 2;
  }
  const Variant* variant = find_variant(variant_name);
  if (!variant) {
    std::fprintf(stderr, "unknown variant %s\n", variant_name.c_str());
    return 2;
  }
  at::NoGradGuard no_grad;
  c10::cuda::CUDAGuard guard(0);
  const AttentionInputs inputs = make_inputs(c, Device::cuda(0), 0);
  at::Tensor output;
  auto forward = [&] { output = variant->forward(inputs); };

  const std::int64_t l2 = at::cuda::getDeviceProperties(0)->l2CacheSize;
  at::Tensor flush = at::empty({2 * l2}, at::TensorOptions().device(at::kCUDA).dtype(at::kByte));
  StreamBlocker blocker;
  at::cuda::CUDAEvent start(cudaEventDefault), stop(cudaEventDefault);
  const nvml::Device clock = nvml::Device::of_cuda_device(0);
  auto stream = at::cuda::getCurrentCUDAStream();

  const std::vector<Protocol> protocols = {
      {"events_only", {"sync", "start", "fwd", "stop", "wait"}},
      {"flush_zero", {"sync", "zero", "start", "fwd", "stop", "wait"}},
      {"flush_memset", {"sync", "memset", "start", "fwd", "stop", "wait"}},
      {"block", {"sync", "block", "start", "fwd", "stop", "release", "wait"}},
      {"flush_zero_then_block (v2)", {"sync", "zero", "block", "start", "fwd", "stop", "release", "wait"}},
      {"flush_memset_then_block", {"sync", "memset", "block", "start", "fwd", "stop", "release", "wait"}},
      {"block_then_flush_zero", {"sync", "block", "zero", "start", "fwd", "stop", "release", "wait"}},
      {"block_then_flush_memset", {"sync", "block", "memset", "start", "fwd", "stop", "release", "wait"}},
      {"flush_zero_sync_block", {"sync", "zero", "sync", "block", "start", "fwd", "stop", "release", "wait"}},
      {"v2_plus_nvml", {"sync", "zero", "block", "start", "fwd", "stop", "release", "wait", "nvml"}},
      {"no_sync_v2", {"zero", "block", "start", "fwd", "stop", "release", "wait"}},
  };
  for (int i = 0; i < 20; ++i) forward();
  stream.synchronize();

  for (int round = 0; round < 2; ++round) {  // round 0 warms every path up, round 1 is printed
    for (const Protocol& protocol : protocols) {
      std::vector<double> wall, gpu;
      std::map<std::string, std::vector<double>> step_us;
      for (int s = 0; s < samples; ++s) {
        const auto sample_start = Clock::now();
        for (const std::string& step : protocol.steps) {
          const auto t0 = Clock::now();
          if (step == "sync") stream.synchronize();
          else if (step == "zero") flush.zero_();
          else if (step == "memset") cudaMemsetAsync(flush.data_ptr(), 0, flush.numel(), stream.stream());
          else if (step == "block") blocker.block(stream.stream(), 100);
          else if (step == "start") start.record(stream);
          else if (step == "fwd") forward();
          else if (step == "stop") stop.record(stream);
          else if (step == "release") blocker.release();
          else if (step == "wait") stop.synchronize();
          else if (step == "nvml") (void)clock.sm_clock_mhz();
          step_us[step].push_back(us_between(t0, Clock::now()));
        }
        wall.push_back(us_between(sample_start, Clock::now()));
        gpu.push_back(start.elapsed_time(stop) * 1000.0);
      }
      if (round == 0) continue;
      std::printf("{\"protocol\": \"%s\", \"variant\": \"%s\", \"shape\": \"%s\", \"dtype\": \"%s\", \"samples\": %d, "
                  "\"wall_us_median\": %.1f, \"wall_us_mean\": %.1f, \"event_us_median\": %.2f, \"timed_out\": %d",
                  protocol.name.c_str(), variant_name.c_str(), shape_text.c_str(), dtype.c_str(), samples,
                  summarize(wall).median, summarize(wall).mean, summarize(gpu).median, blocker.timed_out() ? 1 : 0);
      for (const auto& [step, values] : step_us) std::printf(", \"%s_us\": %.1f", step.c_str(), summarize(values).median);
      std::printf("}\n");
      std::fflush(stdout);
    }
  }

  // The real timer, as attnsweep run uses it.
  auto time_real_timer = [&](bool l2_flush, bool hide, const char* note) {
    auto timer = make_timer(Device::cuda(0), l2_flush, hide);
    std::vector<double> wall, gpu, dispatch;
    for (int s = 0; s < 2 * samples; ++s) {
      const auto t0 = Clock::now();
      const TimingSample sample = timer->time(forward);
      if (s < samples) continue;  // the first half warms up
      wall.push_back(us_between(t0, Clock::now()));
      gpu.push_back(*sample.gpu_time_us);
      dispatch.push_back(*sample.host_dispatch_us);
    }
    std::printf("{\"protocol\": \"Timer l2_flush=%d hide_launch_latency=%d%s\", \"variant\": \"%s\", "
                "\"shape\": \"%s\", \"samples\": %d, \"wall_us_median\": %.1f, \"wall_us_mean\": %.1f, "
                "\"event_us_median\": %.2f, \"dispatch_us_median\": %.1f}\n",
                l2_flush, hide, note, variant_name.c_str(), shape_text.c_str(), samples, summarize(wall).median,
                summarize(wall).mean, summarize(gpu).median, summarize(dispatch).median);
    std::fflush(stdout);
  };
  for (const bool l2_flush : {false, true}) {
    for (const bool hide : {false, true}) time_real_timer(l2_flush, hide, "");
  }
  // Once more after a profiling session: does CUPTI stay attached and slow launches down?
  KinetoProfiler(Device::cuda(0)).profile(forward, 3, "");
  time_real_timer(false, false, " after a profile");
  time_real_timer(true, true, " after a profile");
  return 0;
}
