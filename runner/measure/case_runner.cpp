#include "runner/measure/case_runner.hpp"

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/core/DeviceGuard.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/util/Exception.h>
#include <torch/csrc/autograd/grad_mode.h>

#include <chrono>
#include <cmath>

#include "runner/common/interrupt.hpp"
#include "runner/measure/device.hpp"
#include "runner/measure/flops.hpp"
#include "runner/measure/inputs.hpp"
#include "runner/measure/stopping_rule.hpp"
#include "runner/measure/timer.hpp"
#include "runner/profile/kineto_profiler.hpp"
#include "runner/variants/naive_attention.hpp"
#include "runner/variants/registry.hpp"
#include "runner/variants/variant_names.hpp"

namespace attnsweep {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

bool contains(const std::string& text, const char* fragment) { return text.find(fragment) != std::string::npos; }

// The float64 reference of one set of inputs is kept for the next variants of
// those inputs up to this size; larger ones are recomputed for every variant.
constexpr std::int64_t kReferenceCacheBytes = std::int64_t{1} << 30;

// A copy of a CUDA tensor in memory of its own (cudaMalloc), outside PyTorch's
// caching allocator, so that a reference kept across cases is not counted in
// their peak_mem_bytes. Empty when the device has no room (then not kept).
std::optional<at::Tensor> copy_outside_allocator(const at::Tensor& tensor) {
  void* data = nullptr;
  if (cudaMalloc(&data, tensor.nbytes()) != cudaSuccess) {
    (void)cudaGetLastError();  // out of memory is not sticky; clear it
    return std::nullopt;
  }
  at::Tensor copy = at::from_blob(data, tensor.sizes(), [](void* pointer) { cudaFree(pointer); }, tensor.options());
  copy.copy_(tensor);
  return copy;
}

}  // namespace

struct CaseRunner::Impl {
  std::string device;
  MeasureSettings settings;
  std::uint64_t seed;
  bool cuda;
  std::unique_ptr<Timer> timer;
  KinetoProfiler profiler;
  bool profiler_warm = false;
  // The inputs of the last case: the plan runs all variants of a shape and dtype
  // back to back, and on the CPU device drawing large inputs anew for each would
  // cost up to a second per case (on a GPU the draw is cheap).
  std::string inputs_key;
  std::optional<AttentionInputs> inputs_cache;
  // Their float64 reference output, one tensor per batch entry, filled by the
  // first accuracy check and reused by the other variants of the same inputs
  // (on CUDA held outside the caching allocator: see copy_outside_allocator).
  std::vector<at::Tensor> reference_cache;

  const AttentionInputs& inputs_for(const Case& c) {
    const std::string key = c.shape.label() + " " + c.dtype + (c.causal ? " causal" : " full");
    if (!inputs_cache || key != inputs_key) {
      drop_inputs();  // free the old inputs before drawing new ones
      inputs_cache = make_inputs(c, device, seed);
      inputs_key = key;
    }
    return *inputs_cache;
  }

  void keep_reference(const at::Tensor& reference) {
    if (!cuda) {
      reference_cache.push_back(reference);
    } else if (auto copy = copy_outside_allocator(reference)) {
      reference_cache.push_back(std::move(*copy));
    }
  }

  void drop_inputs() {
    reference_cache.clear();
    inputs_cache.reset();
  }

  Impl(std::string device_in, MeasureSettings settings_in, std::uint64_t seed_in)
      : device(std::move(device_in)),
        settings(settings_in),
        seed(seed_in),
        cuda(is_cuda_device(device)),
        timer(make_timer(device, settings_in.l2_flush, settings_in.hide_launch_latency)),
        profiler(device) {}


  // Relative Frobenius error against float64, one batch entry at a time so the
  // float64 score matrix stays small.
  double relative_error(const at::Tensor& output, const AttentionInputs& inputs) {
    const bool keep = output.numel() * static_cast<std::int64_t>(sizeof(double)) <= kReferenceCacheBytes;
    double error_squares = 0, reference_squares = 0;
    for (std::int64_t b = 0; b < inputs.query.size(0); ++b) {
      const auto index = static_cast<std::size_t>(b);
      at::Tensor reference;
      if (index < reference_cache.size()) {
        reference = reference_cache[index];
      } else {
        AttentionInputs slice = inputs;
        slice.query = inputs.query.narrow(0, b, 1);
        slice.key = inputs.key.narrow(0, b, 1);
        slice.value = inputs.value.narrow(0, b, 1);
        reference = reference_attention(slice);
        if (keep && index == reference_cache.size()) keep_reference(reference);
      }
      const at::Tensor difference = output.narrow(0, b, 1).to(at::kDouble) - reference;
      error_squares += difference.pow(2).sum().item<double>();
      reference_squares += reference.pow(2).sum().item<double>();
    }
    return std::sqrt(error_squares) / std::sqrt(reference_squares);
  }

  // Samples whose SM clock fell under throttle_fraction x the maximum are kept
  // in the samples table but left out of the statistics and the stopping rule.
  bool throttled(const TimingSample& sample) const {
    const auto max_clock = timer->max_sm_clock_mhz();
    return sample.sm_clock_mhz && max_clock && *sample.sm_clock_mhz < settings.throttle_fraction * *max_clock;
  }

  // Takes samples of `call` until the stopping rule says stop; returns the kept times.
  std::vector<double> sample_until_stop(const std::function<void()>& call, const std::string& mode, CaseResult& result) {
    StoppingRule rule(settings);
    std::vector<double> kept;
    const auto start = Clock::now();
    do {
      if (interrupt_requested()) throw Interrupted{};
      TimingSample sample = timer->time(call);
      sample.mode = mode;
      if (mode == "graph") sample.host_dispatch_us.reset();
      sample.throttled = throttled(sample);
      if (sample.block_timed_out) {
        // The forward waited on the GPU while the stream was held: unblocked from now on.
        timer->stop_blocking();
        result.launch_latency_hidden = false;
        result.warnings.push_back("the forward waits on the GPU, so launch latency could not be kept out of the "
                                  "event interval; samples taken without the blocking kernel");
      }
      const double value = sample.gpu_time_us ? *sample.gpu_time_us : *sample.cpu_time_us;
      if (!sample.throttled && !sample.block_timed_out) {
        rule.add_sample(value);
        kept.push_back(value);
      }
      result.samples.push_back(sample);
    } while (!rule.should_stop(seconds_since(start)));
    if (mode == "eager") result.stop_reason = rule.reason();
    return kept;
  }

  void time_case(const std::function<void()>& forward, CaseResult& result) {
    if (cuda) result.launch_latency_hidden = settings.hide_launch_latency;
    const std::vector<double> kept = sample_until_stop(forward, "eager", result);
    result.timer = timer->name();
    std::vector<double> dispatch_times, clocks;
    for (const auto& sample : result.samples) {
      if (sample.throttled) ++result.throttled_samples;
      if (sample.throttled || sample.block_timed_out) continue;
      if (sample.host_dispatch_us) dispatch_times.push_back(*sample.host_dispatch_us);
      if (sample.sm_clock_mhz) clocks.push_back(*sample.sm_clock_mhz);
    }
    if (kept.empty()) {
      result.warnings.push_back("every sample ran under the throttle fraction of the maximum SM clock");
      return;
    }
    const SampleStatistics stats = summarize(kept);
    if (cuda) {
      result.gpu_time_us = stats;
    } else {
      result.cpu_time_us = stats;
    }
    result.cpu_dispatch_us_median = summarize(dispatch_times).median;
    if (!clocks.empty()) result.sm_clock_mhz_mean = summarize(clocks).mean;
    if (stats.median > 0) {
      result.tflops = result.flops / (stats.median * 1e-6) / 1e12;
      result.bandwidth_gbps = result.min_bytes / (stats.median * 1e-6) / 1e9;
    }
  }

  // Captures one forward as a CUDA graph on a side stream and times replays
  // with the same protocol: launch gaps between the forward's kernels vanish.
  void time_graph(const std::function<void()>& forward, CaseResult& result) {
    try {
      at::cuda::CUDAGraph graph;
      {
        c10::cuda::CUDAStreamGuard capture_stream(c10::cuda::getStreamFromPool());
        forward();  // warm up on the capture stream (workspaces, handles)
        c10::cuda::getCurrentCUDAStream().synchronize();
        graph.capture_begin();
        forward();
        graph.capture_end();
      }
      const std::vector<double> kept = sample_until_stop([&] { graph.replay(); }, "graph", result);
      if (!kept.empty()) result.graph_time_us = summarize(kept);
    } catch (const c10::Error& error) {
      result.graph_error = error.what_without_backtrace();
      (void)cudaGetLastError();  // a failed capture leaves a non-sticky error behind
    }
  }

  void profile_case(const std::function<void()>& forward, const std::string& trace_path, CaseResult& result) {
    if (!profiler_warm) {
      profiler.warm_up(forward);
      profiler_warm = true;
    }
    ProfileSummary summary;
    for (int attempt = 1; attempt <= settings.max_profile_attempts; ++attempt) {
      const auto events = profiler.profile(forward, settings.profiled_forwards, trace_path);
      summary = attribute_events(events, settings.profiled_forwards, cuda);
      summary.attempts = attempt;
      if (summary.counts_consistent) break;
    }
    if (!summary.counts_consistent) {
      result.warnings.push_back("kernel counts differed between profiled forwards in all " +
                                std::to_string(summary.attempts) + " profiling attempts; counts are not trustworthy");
    }
    if (!trace_path.empty()) result.trace_path = trace_path;
    result.profile = std::move(summary);
  }

  void measure(const Case& c, const Variant& variant, const std::string& trace_path, CaseResult& result) {
    PhaseSeconds& phases = result.phases;
    auto phase_start = Clock::now();
    // Adds the time since the last call to `phase` (phases run one after another).
    auto end_phase = [&phase_start](double& phase) {
      const auto now = Clock::now();
      phase += std::chrono::duration<double>(now - phase_start).count();
      phase_start = now;
    };
    const AttentionInputs& inputs = inputs_for(c);
    const Support support = variant.check(inputs);
    end_phase(phases.setup);
    if (!support.supported) {
      result.status = "unsupported";
      result.error_message = support.reason;
      return;
    }
    result.sdpa_backend = variant.sdpa_backend(inputs);

    if (settings.accuracy_check) {
      const double error = relative_error(variant.forward(inputs), inputs);
      if (std::isfinite(error)) {
        result.rel_error = error;
      } else {
        result.warnings.push_back("output is not finite (NaN or Inf); rel_error left empty");
      }
    }
    if (cuda) {
      synchronize_device(device);
      c10::cuda::CUDACachingAllocator::emptyCache();
      c10::cuda::CUDACachingAllocator::resetPeakStats(cuda_device_index(device));
    }
    end_phase(phases.accuracy);
    at::Tensor output;
    const std::function<void()> forward = [&] { output = variant.forward(inputs); };
    for (int i = 0; i < settings.warmup; ++i) {
      if (interrupt_requested()) throw Interrupted{};
      forward();
    }
    synchronize_device(device);
    end_phase(phases.warmup);
    time_case(forward, result);
    end_phase(phases.timing);
    if (cuda && settings.cuda_graph) time_graph(forward, result);
    end_phase(phases.graph);
    profile_case(forward, trace_path, result);
    end_phase(phases.profile);
    if (cuda) {
      const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(cuda_device_index(device));
      result.peak_mem_bytes = stats.allocated_bytes[static_cast<std::size_t>(c10::CachingAllocator::StatType::AGGREGATE)].peak;
    }
  }
};

CaseRunner::CaseRunner(std::string device, MeasureSettings settings, std::uint64_t seed)
    : impl_(std::make_unique<Impl>(std::move(device), settings, seed)) {}

CaseRunner::~CaseRunner() = default;

CaseResult CaseRunner::run(const Case& c, const std::string& trace_path) {
  const auto start = Clock::now();
  CaseResult result;
  result.device = impl_->device;
  result.flops = forward_flops(c.shape, c.causal);
  result.min_bytes = forward_min_bytes(c.shape, c.dtype);
  const VariantInfo* info = find_variant_info(c.variant);
  const Variant* variant = find_variant(c.variant);
  if (!info || !variant) {
    result.status = "error";
    result.error_message = "unknown variant '" + c.variant + "'";
    return result;
  }
  if (!impl_->cuda && !info->runs_on_cpu) {
    result.status = "unsupported";
    result.error_message = c.variant + " has no CPU implementation in PyTorch (CPU SDPA backends: flash, math)";
    return result;
  }
  c10::OptionalDeviceGuard device_guard;
  if (impl_->cuda) device_guard.reset_device(at::Device(impl_->device));
  at::NoGradGuard no_grad;
  try {
    impl_->measure(c, *variant, trace_path, result);
  } catch (const c10::OutOfMemoryError& error) {
    result.status = "oom";
    result.error_message = error.what_without_backtrace();
  } catch (const c10::Error& error) {
    const std::string message = error.what_without_backtrace();
    // A backend PyTorch refuses at run time is unsupported, not an error.
    result.status = contains(message, "No available kernel") || contains(message, "Invalid backend") ? "unsupported" : "error";
    result.error_message = message;
  } catch (const std::exception& error) {
    result.status = "error";
    result.error_message = error.what();
  }
  if (result.status != "ok") {
    // Partial measurements of a failed case would mislead: keep only the reason.
    const std::string status = result.status, message = result.error_message;
    const double flops = result.flops, bytes = result.min_bytes;
    const PhaseSeconds phases = result.phases;  // where the time went is still true
    result = CaseResult{};
    result.phases = phases;
    result.status = status;
    result.error_message = message;
    result.device = impl_->device;
    result.flops = flops;
    result.min_bytes = bytes;
    // A case that failed while running may have left them in a bad state; an
    // unsupported one never touched them (and redrawing cost up to a second).
    if (status != "unsupported") impl_->drop_inputs();
    if (impl_->cuda) {
      // CUDA errors such as a device-side assert are sticky: the context stays
      // broken and every later call fails. Find out now, once.
      try {
        synchronize_device(impl_->device);
        c10::cuda::CUDACachingAllocator::emptyCache();
      } catch (const std::exception&) {
        result.device_unusable = true;
      }
    }
  }
  result.wall_seconds = seconds_since(start);
  return result;
}

}  // namespace attnsweep
