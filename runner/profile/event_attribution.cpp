#include "runner/profile/event_attribution.hpp"

#include <nlohmann/json.hpp>

#include <optional>

#include <algorithm>
#include <map>
#include <unordered_map>

namespace attnsweep {
namespace {

const std::string kLabelPrefix = "attnsweep::forward#";
const std::string kReplayPrefix = "attnsweep::graph_replay#";

struct Window {
  std::uint64_t start = 0, end = 0;
  bool found = false;
  bool contains(std::uint64_t t) const { return found && t >= start && t <= end; }
  void widen(const ProfiledEvent& e) {
    if (!found) {
      start = e.start_ns;
      end = e.end_ns;
      found = true;
    } else {
      start = std::min(start, e.start_ns);
      end = std::max(end, e.end_ns);
    }
  }
};

int label_index(const std::string& name, int forwards, const std::string& prefix) {
  if (name.rfind(prefix, 0) != 0) return -1;
  try {
    const int index = std::stoi(name.substr(prefix.size()));
    return index >= 0 && index < forwards ? index : -1;
  } catch (const std::exception&) {
    return -1;
  }
}

int window_of(const std::vector<Window>& windows, std::uint64_t t) {
  for (std::size_t i = 0; i < windows.size(); ++i) {
    if (windows[i].contains(t)) return static_cast<int>(i);
  }
  return -1;
}

const char* device_kind(Activity activity) {
  switch (activity) {
    case Activity::kernel: return "kernel";
    case Activity::gpu_memcpy: return "memcpy";
    case Activity::gpu_memset: return "memset";
    default: return nullptr;
  }
}

const char* host_kind(Activity activity) {
  switch (activity) {
    case Activity::cpu_op: return "op";
    case Activity::cuda_runtime: return "cuda_runtime";
    case Activity::cuda_driver: return "cuda_driver";
    default: return nullptr;
  }
}

struct DeviceAccumulator {
  int launches = 0;
  double total_us = 0, min_us = 0, max_us = 0;
  std::int64_t stream = -1;
  std::string metadata_json;  // of the first launch
};

// Kineto's kernel metadata is a JSON object without its braces:
// "grid": [8, 8, 16], "block": [128, 1, 1], "registers per thread": 255, ...
void add_launch_metadata(const std::string& fragment, KernelStat& stat) {
  if (fragment.empty()) return;
  const auto json = nlohmann::json::parse("{" + fragment + "}", nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) return;
  auto number = [&](const char* key) -> std::optional<double> {
    const auto it = json.find(key);
    return it != json.end() && it->is_number() ? std::optional<double>(it->get<double>()) : std::nullopt;
  };
  if (json.contains("grid")) stat.grid = json["grid"].dump();
  if (json.contains("block")) stat.block = json["block"].dump();
  if (auto registers = number("registers per thread")) stat.registers_per_thread = static_cast<int>(*registers);
  if (auto shared = number("shared memory")) stat.shared_memory_bytes = static_cast<std::int64_t>(*shared);
  stat.blocks_per_sm = number("blocks per SM");
  stat.warps_per_sm = number("warps per SM");
  stat.est_occupancy_pct = number("est. achieved occupancy %");
}

struct HostAccumulator {
  int calls = 0;
  double self_us = 0, total_us = 0;
};

double duration_us(const ProfiledEvent& e) { return e.end_ns >= e.start_ns ? (e.end_ns - e.start_ns) / 1000.0 : 0; }

// Self time of nested host events (one thread's timeline): each event's
// duration minus its direct children's.
void add_self_times(std::vector<const ProfiledEvent*> events,
                    std::map<std::pair<std::string, std::string>, HostAccumulator>& ops) {
  std::sort(events.begin(), events.end(), [](const ProfiledEvent* a, const ProfiledEvent* b) {
    return a->start_ns != b->start_ns ? a->start_ns < b->start_ns : a->end_ns > b->end_ns;
  });
  std::vector<double> self(events.size());
  std::vector<std::size_t> stack;
  for (std::size_t i = 0; i < events.size(); ++i) {
    self[i] = duration_us(*events[i]);
    while (!stack.empty() && events[stack.back()]->end_ns <= events[i]->start_ns) stack.pop_back();
    if (!stack.empty()) self[stack.back()] -= duration_us(*events[i]);
    stack.push_back(i);
  }
  for (std::size_t i = 0; i < events.size(); ++i) {
    auto& op = ops[{host_kind(events[i]->activity), events[i]->name}];
    op.calls += 1;
    op.self_us += std::max(0.0, self[i]);
    op.total_us += duration_us(*events[i]);
  }
}

}  // namespace

std::string forward_label(int index) { return kLabelPrefix + std::to_string(index); }
std::string replay_label(int index) { return kReplayPrefix + std::to_string(index); }

ProfileSummary attribute_events(const std::vector<ProfiledEvent>& events, int forwards, bool device_is_cuda,
                                Labelled labelled) {
  const std::string& prefix = labelled == Labelled::forwards ? kLabelPrefix : kReplayPrefix;
  ProfileSummary summary;
  summary.profiled_forwards = forwards;
  summary.kernels_each_forward.assign(forwards, 0);
  summary.memcpy_each_forward.assign(forwards, 0);
  summary.memset_each_forward.assign(forwards, 0);

  std::vector<Window> host_windows(forwards), device_windows(forwards);
  for (const auto& e : events) {
    const int index = label_index(e.name, forwards, prefix);
    if (index < 0) continue;
    if (e.activity == Activity::user_annotation) host_windows[index].widen(e);
    if (e.activity == Activity::gpu_user_annotation) device_windows[index].widen(e);
  }

  // Host side: operators and launch calls inside each forward's label.
  std::vector<std::vector<const ProfiledEvent*>> host_events(forwards);
  std::unordered_map<std::uint64_t, int> launch_forward;  // correlation id -> forward
  for (const auto& e : events) {
    if (!host_kind(e.activity)) continue;
    const int index = window_of(host_windows, e.start_ns);
    if (index < 0) continue;
    host_events[index].push_back(&e);
    if (e.activity != Activity::cpu_op && e.correlation_id != 0) launch_forward[e.correlation_id] = index;
  }
  std::map<std::pair<std::string, std::string>, HostAccumulator> ops;
  int cpu_op_calls = 0;
  for (int i = 0; i < forwards; ++i) {
    // Self times nest within one thread: a backward's ops on autograd's device
    // thread overlap the calling thread's wait and are not its children.
    std::map<std::uint64_t, std::vector<const ProfiledEvent*>> by_thread;
    for (const auto* e : host_events[i]) by_thread[e->thread].push_back(e);
    for (auto& [thread, thread_events] : by_thread) add_self_times(std::move(thread_events), ops);
    for (const auto* e : host_events[i]) cpu_op_calls += e->activity == Activity::cpu_op ? 1 : 0;
  }

  // Device side: kernels, copies and memsets, each charged to the forward whose launch call it came from.
  std::map<std::pair<std::string, std::string>, DeviceAccumulator> device;
  std::vector<std::pair<std::uint64_t, std::string>> first_forward_kernels;  // start, name
  double device_time_us = 0;
  for (const auto& e : events) {
    const char* kind = device_kind(e.activity);
    if (!kind) continue;
    int index = -1;
    const auto found = launch_forward.find(e.correlation_id);
    if (e.correlation_id != 0 && found != launch_forward.end()) index = found->second;
    if (index < 0) index = window_of(device_windows, e.start_ns);
    if (index < 0) {
      ++summary.unattributed_device_events;
      continue;
    }
    auto& counts = e.activity == Activity::kernel       ? summary.kernels_each_forward
                   : e.activity == Activity::gpu_memcpy ? summary.memcpy_each_forward
                                                        : summary.memset_each_forward;
    counts[index] += 1;
    if (index == 0 && e.activity == Activity::kernel) first_forward_kernels.emplace_back(e.start_ns, e.name);
    const double us = duration_us(e);
    device_time_us += us;
    auto& acc = device[{kind, e.name}];
    acc.min_us = acc.launches == 0 ? us : std::min(acc.min_us, us);
    acc.max_us = acc.launches == 0 ? us : std::max(acc.max_us, us);
    acc.launches += 1;
    acc.total_us += us;
    acc.stream = e.stream;
    if (acc.metadata_json.empty()) acc.metadata_json = e.metadata_json;
  }

  const double n = forwards > 0 ? forwards : 1;
  for (const auto& [key, acc] : device) {
    KernelStat stat;
    stat.name = key.second;
    stat.kind = key.first;
    stat.launches_per_forward = acc.launches / n;
    stat.total_us = acc.total_us / n;
    stat.mean_us = acc.total_us / acc.launches;
    stat.min_us = acc.min_us;
    stat.max_us = acc.max_us;
    stat.stream = acc.stream;
    add_launch_metadata(acc.metadata_json, stat);  // grid, block, registers, ...
    summary.kernels.push_back(stat);
  }
  for (const auto& [key, acc] : ops) {
    summary.ops.push_back({key.second, key.first, acc.calls / n, acc.self_us / n, acc.total_us / n});
  }
  std::sort(summary.kernels.begin(), summary.kernels.end(),
            [](const KernelStat& a, const KernelStat& b) { return a.total_us > b.total_us; });
  std::sort(summary.ops.begin(), summary.ops.end(),
            [](const OpStat& a, const OpStat& b) { return a.self_cpu_us > b.self_cpu_us; });
  std::stable_sort(first_forward_kernels.begin(), first_forward_kernels.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [start, name] : first_forward_kernels) summary.kernel_launch_order.push_back(name);
  summary.kernel_time_us_per_forward = device_time_us / n;
  summary.cpu_ops_per_forward = static_cast<int>(cpu_op_calls / n + 0.5);

  // Counts are exact facts: every forward must show the same ones, and every
  // label must have been recorded (a missing one means dropped records).
  auto all_equal = [](const std::vector<int>& v) { return std::adjacent_find(v.begin(), v.end(), std::not_equal_to<>()) == v.end(); };
  const bool labels_found = std::all_of(host_windows.begin(), host_windows.end(), [](const Window& w) { return w.found; });
  summary.labels_recorded = labels_found;
  summary.counts_consistent = labels_found && all_equal(summary.kernels_each_forward) &&
                              all_equal(summary.memcpy_each_forward) && all_equal(summary.memset_each_forward);
  if (device_is_cuda && forwards > 0 && summary.kernels_each_forward[0] + summary.memcpy_each_forward[0] == 0 &&
      summary.memset_each_forward[0] == 0) {
    summary.counts_consistent = false;  // a CUDA forward that launched nothing was not recorded
  }
  return summary;
}

}  // namespace attnsweep
