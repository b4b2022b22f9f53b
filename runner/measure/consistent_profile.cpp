#include "runner/measure/consistent_profile.hpp"

namespace attnsweep {

void ConsistentProfiler::profile(const std::function<void()>& call, int forwards, int max_attempts,
                                 const std::string& trace_path, CaseResult& result, const std::function<void()>& before) {
  if (!warm_) {
    profiler_.warm_up(call, before);
    warm_ = true;
  }
  ProfileSummary summary;
  for (int attempt = 1; attempt <= max_attempts; ++attempt) {
    const auto events = profiler_.profile(call, forwards, trace_path, before);
    summary = attribute_events(events, forwards, cuda_);
    summary.attempts = attempt;
    if (summary.counts_consistent) break;
  }
  if (!summary.counts_consistent) {
    result.warnings.push_back("kernel counts differed between profiled forwards in all " +
                              std::to_string(summary.attempts) + " profiling attempts; counts are not trustworthy");
  }
  if (!trace_path.empty()) {
    // A trace that could not be written is a warning on the case, and no trace_path names it.
    if (profiler_.last_trace_error().empty()) {
      result.trace_path = trace_path;
    } else {
      result.warnings.push_back(profiler_.last_trace_error());
    }
  }
  result.profile = std::move(summary);
}

}  // namespace attnsweep
