#pragma once
// Hardware counters of the kernels one pass launches (issue 39), through CUPTI's
// range profiler in its automatic ranges (one range per kernel launch), with
// kernel replay (CUPTI runs each kernel as many times as its counters need, 8 for
// the four counters on an H100, saving and restoring the memory it writes) or
// user replay (the whole pass runs that many times, each run prepared again).
// Kernel replay is the default: user replay was slower and its written bytes no
// nearer Nsight Compute's on an H100 (docs/measurement.md, "Counters"). The libcupti the process already has (LibTorch's Kineto loads the
// torch wheel's libcupti.so.13) is found with dlopen, as NVML is: a machine
// without it, a GPU whose counters are restricted to administrators
// (NVreg_RestrictProfilingToAdminUsers) or a metric the chip lacks gives a reason
// in words, never a crash. LibTorch-free: the case runner hands it the pass.
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace attnsweep::cupti {

// One range of the counter pass: one kernel launch, in launch order.
struct KernelCounters {
  std::string name;              // the range's name: automatic ranges are numbered in launch order ("0", "1", ...)
  std::vector<double> values;    // one per metric asked for, in that order
};

struct CounterReadout {
  std::vector<KernelCounters> kernels;
  int replay_passes = 0;         // how many times each kernel ran
  std::string why_not;           // non-empty: nothing was read, and why
};

// Whether CUPTI's range profiler was compiled in (its headers were found at build time).
bool compiled_in();

class RangeProfiler {
 public:
  // The profiler for the CUDA device `cuda_index` and these metrics (CUPTI's names,
  // e.g. dram__bytes_read.sum), set up once; the current CUDA context must be that
  // device's. Empty, with why_not set, where counters cannot be read here.
  static std::unique_ptr<RangeProfiler> open(int cuda_index, const std::vector<std::string>& metrics,
                                             std::string& why_not);
  // Which of `candidates` this chip knows (CUPTI's metric properties), in order.
  static std::vector<std::string> known_metrics(int cuda_index, const std::vector<std::string>& candidates,
                                                std::string& why_not);
  ~RangeProfiler();
  RangeProfiler(const RangeProfiler&) = delete;
  RangeProfiler& operator=(const RangeProfiler&) = delete;

  enum class Replay { kernel, user };
  // Runs `prepare` (outside the profiler: nothing it launches is read), then
  // `pass` between the profiler's start and stop, then `synchronize`: once with
  // kernel replay, as many times as CUPTI needs with user replay (`pass` must then
  // launch the same kernels each time); and evaluates every range. Kernels only;
  // copies and memsets are not ranges.
  CounterReadout collect(const std::function<void()>& prepare, const std::function<void()>& pass,
                         const std::function<void()>& synchronize, Replay replay = Replay::kernel);

  const std::vector<std::string>& metrics() const;

  struct State;

 private:
  explicit RangeProfiler(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace attnsweep::cupti
