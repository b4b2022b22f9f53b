#pragma once
// Profiles forwards with PyTorch's Kineto profiler (CPU + CUDA activities) and
// hands back its events in our own plain form (event_attribution.hpp).
#include <functional>
#include <string>
#include <vector>

#include "runner/common/identities.hpp"
#include "runner/profile/event_attribution.hpp"

namespace attnsweep {

// Kineto's save reports nothing when writing fails (a full disk, a missing
// folder): "" when `path` holds a complete trace, else why not (and the
// partial file is removed).
std::string check_trace_file(const std::string& path);

class KinetoProfiler {
 public:
  explicit KinetoProfiler(const Device& device);

  // CUDA profiling tears CUPTI down after every session unless the user set
  // TEARDOWN_CUPTI to something else than "1": that value, or "" when torn down.
  static std::string cupti_kept_by_user();

  // One throwaway session, so CUPTI's start-up cost lands in no measured case.
  void warm_up(const std::function<void()>& forward, const std::function<void()>& before = {});

  // Runs `forward` `forwards` times, each under the record_function label
  // forward_label(i), with the device synchronized before and after. Writes a
  // Chrome trace to trace_path when it is not empty; last_trace_error() then
  // says whether it was written completely. `before`, when set, runs ahead of
  // each labelled call, outside the label and followed by a synchronize, so
  // none of its work is charged to the call (a backward's forward). A
  // backward's kernels are launched by autograd's device thread while the
  // calling thread waits inside the label: attribution is by time, any thread.
  // `replay`, when set, runs `forwards` times first, each under replay_label(i)
  // (a CUDA graph's replay, whose kernels are counted apart), before the
  // labelled calls and their `before` (which may free what a replay reads).
  std::vector<ProfiledEvent> profile(const std::function<void()>& forward, int forwards,
                                     const std::string& trace_path, const std::function<void()>& before = {},
                                     const std::function<void()>& replay = {});
  // Why the last profile's trace is missing or incomplete; empty when it was written (or not asked for).
  const std::string& last_trace_error() const { return last_trace_error_; }

 private:
  // Finishes a pending CUPTI teardown with one tiny kernel (CUDA only).
  void complete_cupti_teardown();

  Device device_;
  bool cuda_;
  std::string last_trace_error_;
};

}  // namespace attnsweep
