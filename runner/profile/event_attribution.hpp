#pragma once
// Turns the profiler's flat event list into per-forward facts: which kernels,
// copies and memsets each labelled forward launched, and which host operators
// ran inside it with their self time. Pure data in, data out, so it is tested
// without a GPU; runner/profile/kineto_profiler.cpp feeds it Kineto's events.
#include <cstdint>
#include <string>
#include <vector>

#include "runner/profile/profile_summary.hpp"

namespace attnsweep {

// Mirrors libkineto::ActivityType values we use (kineto/ActivityType.h).
enum class Activity : std::uint8_t {
  cpu_op = 0,
  user_annotation = 1,
  gpu_user_annotation = 2,
  gpu_memcpy = 3,
  gpu_memset = 4,
  kernel = 5,
  cuda_runtime = 7,
  cuda_driver = 8,
  other = 255,
};

struct ProfiledEvent {
  Activity activity = Activity::other;
  std::string name;
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
  std::uint64_t correlation_id = 0;
  std::int64_t stream = -1;
  std::uint64_t thread = 0;   // host events: the thread that ran them (a backward's ops run on autograd's)
  std::string metadata_json;  // Kineto's brace-less JSON fragment (kernels: grid, block, registers, ...)
};

// The record_function label of forward i, and of graph replay i (profiled in
// the same session after the forwards: the replay's kernel count is checked
// against the forward's, docs/measurement.md "Validity").
std::string forward_label(int index);
std::string replay_label(int index);

// Which labels attribute_events reads.
enum class Labelled { forwards, replays };

// Attributes events to forwards labelled forward_label(0..forwards-1) (or the
// replays labelled replay_label(...), with Labelled::replays):
// host events by time inside the label's host interval; device events through
// the correlation id of the runtime/driver call that launched them, or, failing
// that, by time inside the label's projection on the device timeline.
ProfileSummary attribute_events(const std::vector<ProfiledEvent>& events, int forwards, bool device_is_cuda,
                                Labelled labelled = Labelled::forwards);

}  // namespace attnsweep
