#include "runner/measure/counter_pass.hpp"

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <utility>

#include "runner/device/cupti_counters.hpp"

namespace attnsweep {

struct CounterPass::State {
  bool tried = false;
  std::unique_ptr<cupti::RangeProfiler> profiler;
  std::string why_not;        // set when the profiler could not be set up
  std::string missing;        // counters CUPTI knows no metric of on this GPU
  std::int64_t flush_bytes = 0;  // 2x the L2: read before each run of the pass (L2 cleaned)
};

CounterPass::CounterPass(Device device, std::vector<std::string> counters)
    : device_(std::move(device)), counters_(std::move(counters)), state_(std::make_unique<State>()) {}

CounterPass::~CounterPass() = default;

void CounterPass::measure(const std::function<void()>& before, const std::function<void()>& call, CaseResult& result) {
  if (!asked()) return;
  if (!device_.is_cuda()) {
    result.counters_why_not = "hardware counters are read on a CUDA device only (this case ran on the CPU)";
    return;
  }
  State& s = *state_;
  if (!s.tried) {
    s.tried = true;
    std::vector<Counter> asked;
    for (const std::string& name : counters_) {
      if (auto counter = parse_counter(name)) asked.push_back(*counter);
    }
    const std::vector<std::string> candidates = counter_metric_candidates(asked);
    std::string why;
    const std::vector<std::string> known = cupti::RangeProfiler::known_metrics(device_.cuda_index(), candidates, why);
    if (known.empty()) {
      s.why_not = why.empty() ? "CUPTI knows none of the counters' metrics on this GPU" : why;
    } else {
      // A counter none of whose metrics the chip has stays empty, with its name said once per case.
      const std::vector<std::string> alone = counter_metric_candidates({});
      for (Counter counter : asked) {
        const std::vector<std::string> own = counter_metric_candidates({counter});
        const bool any = std::any_of(own.begin(), own.end(), [&](const std::string& m) {
          return std::find(alone.begin(), alone.end(), m) == alone.end() &&
                 std::find(known.begin(), known.end(), m) != known.end();
        });
        if (!any) s.missing += (s.missing.empty() ? "" : ", ") + to_string(counter);
      }
      s.profiler = cupti::RangeProfiler::open(device_.cuda_index(), known, why);
      if (!s.profiler) s.why_not = why;
      const std::int64_t l2 = at::cuda::getDeviceProperties(device_.cuda_index())->l2CacheSize;
      s.flush_bytes = std::max<std::int64_t>(2 * l2, 64 << 20);
    }
  }
  if (!s.profiler) {
    result.counters_why_not = s.why_not;
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  cupti::CounterReadout readout;
  {
    // Nothing of the last run in L2, as a timed sample starts (timer.cpp), but L2 left clean: the
    // timer overwrites L2 (a memset, as nvbench does), whose dirty lines the measured kernels would
    // write back and count as their own DRAM writes. Reading 2x the L2 evicts them before the range
    // opens, as Nsight Compute's cache control does before each of its passes.
    // Allocated for this pass only: a buffer kept across cases would be in every later case's
    // peak_mem_bytes (the peak is reset to what is allocated when a case starts).
    const at::Tensor flush = at::empty(
        {s.flush_bytes}, at::TensorOptions().device(at::Device(at::kCUDA, device_.cuda_index())).dtype(at::kByte));
    const auto prepare = [&] {
      if (before) before();
      (void)flush.sum();  // a read of every byte; the one-element result is all it writes
      synchronize_device(device_);
    };
    readout = s.profiler->collect(prepare, call, [this] { synchronize_device(device_); });
  }
  result.counters_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!readout.why_not.empty()) {
    result.counters_why_not = readout.why_not;
    return;
  }
  if (readout.kernels.empty()) {
    result.counters_why_not = "the pass launched no kernel for the range profiler to read";
    return;
  }
  std::vector<CounterLaunch> launches;
  for (const cupti::KernelCounters& kernel : readout.kernels) launches.push_back({kernel.name, kernel.values});
  // The ranges are numbered; the profile of the same pass names its kernels in launch order.
  const bool named = result.profile && kernels_on_one_stream(result.profile->kernels) &&
                     name_launches_in_order(launches, result.profile->kernel_launch_order);
  if (!named && result.profile) {
    result.warnings.push_back("the counter pass read " + std::to_string(launches.size()) + " kernel launches where the "
                              "profile saw " + std::to_string(result.profile->kernel_launch_order.size()) +
                              " (or the kernels ran on several streams): its counters are the case's totals only, "
                              "not each kernel's");
  }
  const CounterFigures figures = sum_counter_launches(s.profiler->metrics(), launches);
  result.counters = figures.pass;
  result.counter_replay_passes = readout.replay_passes;
  if (!s.missing.empty()) {
    result.warnings.push_back("counters not on this GPU (CUPTI knows none of their metrics): " + s.missing);
  }
  if (result.profile && named) {
    const std::string unmatched = attach_kernel_counters(figures, result.profile->kernels);
    if (!unmatched.empty()) {
      result.warnings.push_back("counter pass kernels not in the profile (their counters are in the case's totals "
                                "only): " + unmatched);
    }
  }
}

}  // namespace attnsweep
