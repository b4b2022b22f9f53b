#include "runner/storage/case_record.hpp"

namespace attnsweep::storage {
namespace {

// GPU launches of one kind per forward (equal in every forward when
// counts_consistent); empty on the CPU, where nothing is launched.
std::optional<int> per_forward(const CaseResult& result, const std::vector<int>& counts) {
  if (!result.device.is_cuda() || counts.empty()) return std::nullopt;
  return counts.front();
}

std::string joined(const std::vector<std::string>& texts) {
  std::string out;
  for (const auto& text : texts) out += (out.empty() ? "" : "; ") + text;
  return out;
}

int eager_samples(const CaseResult& result) {
  int count = 0;
  for (const auto& sample : result.samples) count += sample.mode == SampleMode::eager ? 1 : 0;
  return count;
}

}  // namespace

CaseRow case_record(const Case& identity, const CaseResult& r, const CaseContext& context) {
  const bool on_gpu = r.device.is_cuda();
  CaseRow row;
  row.run_id = context.run_id;
  row.identity = identity;
  row.device = r.device;
  row.status = r.status;
  row.error_message = r.error_message;
  row.warnings = joined(r.warnings);
  row.sdpa_backend = r.sdpa_backend;
  row.timer = r.timer;
  row.stop_reason = r.stop_reason;
  row.graph_stop_reason = r.graph_stop_reason;
  row.graph_error = r.graph_error;
  row.finished_at = context.finished_at;
  row.trace_path = context.trace_path;
  if (r.profile) {
    const ProfileSummary& p = *r.profile;
    row.kernels_per_forward = per_forward(r, p.kernels_each_forward);
    row.memcpy_per_forward = per_forward(r, p.memcpy_each_forward);
    row.memset_per_forward = per_forward(r, p.memset_each_forward);
    row.cpu_ops_per_forward = p.cpu_ops_per_forward;
    row.counts_consistent = p.counts_consistent;
    row.profile_attempts = p.attempts;
    row.profiled_forwards = p.profiled_forwards;
    if (on_gpu) row.kernel_time_us_per_forward = p.kernel_time_us_per_forward;
  }
  if (const int eager = eager_samples(r); eager > 0) row.samples = eager;
  // Stored on the GPU for a case that took samples; a CPU run has no clock to throttle.
  if (on_gpu && !r.samples.empty()) row.throttled_samples = r.throttled_samples;
  row.launch_latency_hidden = r.launch_latency_hidden;
  row.gpu_time_us = r.gpu_time_us;
  row.cpu_time_us = r.cpu_time_us;
  row.graph_time_us = r.graph_time_us;
  // The precision of the median the case reports: the GPU's on CUDA, the CPU's on the CPU.
  const auto& primary = r.gpu_time_us ? r.gpu_time_us : r.cpu_time_us;
  if (primary) row.median_ci_rel = primary->median_ci_rel;
  row.cpu_dispatch_us_median = r.cpu_dispatch_us_median;
  row.rel_error = r.rel_error;
  row.rel_error_dequantized = r.rel_error_dequantized;
  row.tflops = r.tflops;
  row.bandwidth_gbps = r.bandwidth_gbps;
  row.sm_clock_mhz_mean = r.sm_clock_mhz_mean;
  row.wall_seconds = r.wall_seconds;
  row.peak_mem_bytes = r.peak_mem_bytes;
  row.flops = r.flops;
  row.min_bytes = r.min_bytes;
  row.gpu_uuid = r.gpu_uuid;
  row.shard_index = context.shard_index;
  row.power_cap_share = r.power_cap_share;
  row.thermal_cap_share = r.thermal_cap_share;
  if (r.numerics) row.numerics = to_string(*r.numerics);
  row.numerics_bound = r.numerics_bound;
  row.other_processes = r.other_processes;
  row.grad_rel_error_q = r.grad_rel_error_q;
  row.grad_rel_error_k = r.grad_rel_error_k;
  row.grad_rel_error_v = r.grad_rel_error_v;
  row.sdpa_backend_backward = r.sdpa_backend_backward;
  row.validity = r.validity;
  row.validity_reasons = r.validity_reasons;
  row.graph_launches_per_replay = r.graph_launches_per_replay;
  row.graph_output_rel_diff = r.graph_output_rel_diff;
  row.energy_j = r.energy_j;
  row.energy_power_w = r.energy_power_w;
  row.energy_window_s = r.energy_window_s;
  row.energy_passes = r.energy_passes;
  if (r.counters) {
    row.dram_read_bytes = r.counters->dram_read_bytes;
    row.dram_write_bytes = r.counters->dram_write_bytes;
    row.l2_hit_rate = r.counters->l2_hit_rate;
    row.sm_throughput = r.counters->sm_throughput;
    row.tensor_pipe = r.counters->tensor_pipe;
    row.counter_launches = r.counters->launches;
    row.counter_kernel_us = r.counters->kernel_us;
  }
  row.counter_replay_passes = r.counter_replay_passes;
  row.counter_seconds = r.counters_seconds;
  row.counters_why_not = r.counters_why_not;
  row.phases = r.phases;
  row.cooldown_seconds = r.cooldown_seconds;
  row.cooldown_budget_exhausted = r.cooldown_budget_exhausted;
  return row;
}

}  // namespace attnsweep::storage
