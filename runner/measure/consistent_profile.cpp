#include "runner/measure/consistent_profile.hpp"

#include <algorithm>
#include <optional>

namespace attnsweep {

namespace {

// Kernels and copies of replay (or forward) i: a CUDA graph may run a
// device-to-device copy as a kernel (seen on the H200: naive's clone is one
// memcpy eagerly and one more kernel in the replay), so the two are counted
// together. Memsets stay memsets in a graph and are left out of both sides.
int launches(const ProfileSummary& summary, std::size_t i) {
  return summary.kernels_each_forward[i] + summary.memcpy_each_forward[i];
}

// Every replay was recorded and launched the same (zero included: a replay
// that launches nothing is a finding, not a dropped record, once its label was
// seen and the forwards' records were complete).
bool replays_agree(const ProfileSummary& replays) {
  if (!replays.labels_recorded || replays.kernels_each_forward.empty()) return false;
  for (std::size_t i = 1; i < replays.kernels_each_forward.size(); ++i) {
    if (launches(replays, i) != launches(replays, 0)) return false;
  }
  return true;
}

}  // namespace

void ConsistentProfiler::profile(const std::function<void()>& call, int forwards, int max_attempts,
                                 const std::string& trace_path, CaseResult& result, const std::function<void()>& before,
                                 const std::function<void()>& replay) {
  if (!warm_) {
    profiler_.warm_up(call, before);
    warm_ = true;
  }
  ProfileSummary summary, replays;
  std::optional<ProfileSummary> consistent;  // the first attempt whose eager counts agreed
  for (int attempt = 1; attempt <= max_attempts; ++attempt) {
    const auto events = profiler_.profile(call, forwards, trace_path, before, replay);
    summary = attribute_events(events, forwards, cuda_);
    summary.attempts = attempt;
    if (replay) replays = attribute_events(events, forwards, cuda_, Labelled::replays);
    if (summary.counts_consistent && !consistent) consistent = summary;
    if (summary.counts_consistent && (!replay || replays_agree(replays))) break;
  }
  // A retry for the replays alone must not trade agreeing eager counts for disagreeing ones.
  if (!summary.counts_consistent && consistent) {
    const int attempts = summary.attempts;
    summary = *consistent;
    summary.attempts = attempts;
  }
  if (replay) {
    if (summary.counts_consistent && replays_agree(replays)) {
      result.graph_launches_per_replay = launches(replays, 0);
    } else {
      result.warnings.push_back("the profiled CUDA-graph replays did not all show the same kernels; "
                                "graph_launches_per_replay left empty");
    }
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
