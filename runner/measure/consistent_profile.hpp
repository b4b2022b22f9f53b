#pragma once
// Profiling a case until its per-forward counts agree: Kineto can drop kernel
// records at the start of a session (pytorch/pytorch#192021), so a session
// whose forwards disagree is repeated, up to max_profile_attempts times.
#include <functional>
#include <string>

#include "runner/common/identities.hpp"
#include "runner/measure/case_result.hpp"
#include "runner/profile/kineto_profiler.hpp"

namespace attnsweep {

class ConsistentProfiler {
 public:
  explicit ConsistentProfiler(const Device& device) : profiler_(device), cuda_(device.is_cuda()) {}

  // Sets result.profile (and result.trace_path when a trace was written); adds
  // a warning when no attempt gave equal counts in every forward. The first call
  // of a process also pays CUPTI's start-up in a throwaway session. `before`,
  // when set, runs ahead of each profiled pass, outside its label (a backward's forward).
  // `replay`, when set (a CUDA graph of the pass), is profiled as many times in
  // the same session and sets result.graph_launches_per_replay (kernels and copies).
  void profile(const std::function<void()>& call, int forwards, int max_attempts, const std::string& trace_path,
               CaseResult& result, const std::function<void()>& before = {},
               const std::function<void()>& replay = {});

 private:
  KinetoProfiler profiler_;
  bool cuda_;
  bool warm_ = false;
};

}  // namespace attnsweep
