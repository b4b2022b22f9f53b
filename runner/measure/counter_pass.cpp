#include "runner/measure/counter_pass.hpp"

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <utility>

#include "runner/device/cupti_counters.hpp"

namespace attnsweep {
namespace {

// Diagnostics of the written bytes (docs/measurement.md, "Counters"), from the environment:
// ATTNSWEEP_COUNTER_L2 says how L2 is emptied before each run of the pass (read: a buffer of 2x
// the L2 read, the default; memset: overwritten, as before a timed sample; memset_read: both, with
// two buffers; none), ATTNSWEEP_COUNTER_REPLAY which replay CUPTI uses (kernel, the default; user).
// Empty when the value is allowed, else the reason.
std::string diagnostic_setting(const char* variable, const std::vector<std::string>& allowed, std::string& value) {
  const char* set = std::getenv(variable);
  value = set && *set ? set : allowed.front();
  if (std::find(allowed.begin(), allowed.end(), value) != allowed.end()) return "";
  std::string list;
  for (const std::string& one : allowed) list += (list.empty() ? "" : ", ") + one;
  return std::string(variable) + "=" + value + " is not one of " + list;
}

}  // namespace

struct CounterPass::State {
  bool tried = false;
  std::unique_ptr<cupti::RangeProfiler> profiler;
  std::string why_not;        // set when the profiler could not be set up
  std::string missing;        // counters CUPTI knows no metric of on this GPU
  std::int64_t flush_bytes = 0;  // 2x the L2: read before each run of the pass (L2 cleaned)
  std::string l2_clean = "read";  // ATTNSWEEP_COUNTER_L2
  cupti::RangeProfiler::Replay replay = cupti::RangeProfiler::Replay::kernel;
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
    std::string replay;
    std::string setting = diagnostic_setting("ATTNSWEEP_COUNTER_L2", {"read", "memset", "memset_read", "none"}, s.l2_clean);
    if (setting.empty()) setting = diagnostic_setting("ATTNSWEEP_COUNTER_REPLAY", {"kernel", "user"}, replay);
    if (replay == "user") s.replay = cupti::RangeProfiler::Replay::user;
    const std::vector<std::string> known =
        setting.empty() ? cupti::RangeProfiler::known_metrics(device_.cuda_index(), candidates, why)
                        : std::vector<std::string>{};
    if (!setting.empty()) {
      s.why_not = setting;
    } else if (known.empty()) {
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
    // Nothing of the last run in L2, as a timed sample starts (timer.cpp): by default a buffer of
    // 2x the L2 read. Neither this nor the timer's memset gets earlier dirty lines written before
    // the pass: the written bytes include them either way, as Nsight Compute's without its cache
    // control (docs/measurement.md, "Counters"). ATTNSWEEP_COUNTER_L2 chooses (above).
    // Allocated for this pass only: a buffer kept across cases would be in every later case's
    // peak_mem_bytes (the peak is reset to what is allocated when a case starts).
    const auto options = at::TensorOptions().device(at::Device(at::kCUDA, device_.cuda_index())).dtype(at::kByte);
    const bool memset = s.l2_clean == "memset" || s.l2_clean == "memset_read";
    const bool read = s.l2_clean == "read" || s.l2_clean == "memset_read";
    const at::Tensor overwritten = memset ? at::empty({s.flush_bytes}, options) : at::Tensor();
    const at::Tensor flush = read ? at::empty({s.flush_bytes}, options) : at::Tensor();
    const auto prepare = [&] {
      if (before) before();
      if (memset) {
        C10_CUDA_CHECK(cudaMemsetAsync(overwritten.data_ptr(), 0, overwritten.nbytes(),
                                       at::cuda::getCurrentCUDAStream().stream()));
      }
      if (read) (void)flush.sum();  // a read of every byte; the one-element result is all it writes
      synchronize_device(device_);
    };
    readout = s.profiler->collect(prepare, call, [this] { synchronize_device(device_); }, s.replay);
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
