#pragma once
// One row of `cases` (docs/schema.md): the record a measured case is stored as
// and read back as. The store makes it from a CaseResult (case_record.hpp) and
// writes it through the column table (case_columns.hpp); the reader reads it
// through the same table. Text columns that are NULL read as ""; nullable
// numbers are optional.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runner/common/identities.hpp"
#include "runner/measure/case_result.hpp"
#include "runner/measure/statistics.hpp"
#include "runner/measure/stop_reason.hpp"
#include "runner/measure/validity_reason.hpp"
#include "runner/plan/case.hpp"
#include "runner/storage/stored_value.hpp"

namespace attnsweep::storage {

struct CaseRow {
  std::int64_t case_id = 0, run_id = 0;
  Case identity;  // plan_index, variant, shape, dtype, mask, pass
  Device device;
  CaseStatus status = CaseStatus::ok;
  std::string error_message, warnings, sdpa_backend, timer, graph_error, finished_at;
  std::optional<StopReason> stop_reason;        // empty for a case that was not timed
  std::optional<StopReason> graph_stop_reason;  // the CUDA-graph replays'; empty without replays
  // As stored: relative to the run's trace_path_base; storage::trace_file_of (trace_location.hpp) resolves it.
  std::string trace_path;
  std::optional<int> kernels_per_forward, memcpy_per_forward, memset_per_forward, cpu_ops_per_forward;
  std::optional<int> samples;  // eager samples taken (throttled ones too)
  std::optional<int> throttled_samples, profile_attempts, profiled_forwards;
  std::optional<bool> counts_consistent, launch_latency_hidden;
  // The kept samples' statistics, each stored as <name>_median, _p10, ... (case_columns.cpp
  // lists which); empty when the case has none. count is stored for the graph replays only
  // (graph_samples), and max for none.
  std::optional<SampleStatistics> gpu_time_us, cpu_time_us, graph_time_us;
  std::optional<double> kernel_time_us_per_forward, cpu_dispatch_us_median, rel_error, tflops, bandwidth_gbps;
  std::optional<double> rel_error_dequantized;  // schema 18: fp8 cases' error against the dequantised inputs
  std::optional<double> median_ci_rel;  // of the median the case reports: the GPU's, else the CPU's
  std::optional<double> sm_clock_mhz_mean, wall_seconds;
  std::optional<std::int64_t> peak_mem_bytes;
  double flops = 0, min_bytes = 0;
  std::string gpu_uuid;            // the GPU that measured it; empty on CPU
  std::optional<int> shard_index;  // the shard that measured it
  // Shares of the kept eager samples under a power cap / thermal slowdown (NVML); empty when unknown.
  std::optional<double> power_cap_share, thermal_cap_share;
  // Schema 9: the numerics verdict (ok, beyond_bound, nonfinite; "" when not
  // judged or stored before) and other compute processes seen on the GPU.
  std::string numerics;
  std::optional<double> numerics_bound;
  std::optional<int> other_processes;
  // Schema 10: backward passes' gradient errors and backend (NULL/"" for forward cases).
  std::optional<double> grad_rel_error_q, grad_rel_error_k, grad_rel_error_v;
  std::string sdpa_backend_backward;
  std::string validity;  // ok or suspect; empty: not judged (not timed, or stored before schema 11)
  std::vector<ValidityReason> validity_reasons;  // why suspect; stored as "code: detail; ..."
  std::optional<int> graph_launches_per_replay;
  std::optional<double> graph_output_rel_diff;
  // Schema 11: the energy window (NULL when not measured): joules per pass, watts,
  // the window's seconds and the passes run in it.
  std::optional<double> energy_j, energy_power_w, energy_window_s;
  std::optional<int> energy_passes;
  // Schema 21: the hardware counters of the counter pass (measure.counters; NULL when not
  // read, with counters_why_not where asked), as CaseResult has them.
  std::optional<double> dram_read_bytes, dram_write_bytes, l2_hit_rate, sm_throughput, tensor_pipe;
  std::optional<int> counter_launches, counter_replay_passes;
  std::optional<double> counter_kernel_us, counter_seconds;
  std::string counters_why_not;
  // Where the case's wall time went (NULL in rows stored before schema 8: read as 0).
  PhaseSeconds phases;
  double cooldown_seconds = 0;  // burst regime; NULL (0) when none
  bool cooldown_budget_exhausted = false;

  // Derived when read, by SQLite with the results view's own expressions
  // (case_columns.cpp): empty in a row that was not read back.
  struct Derived {
    std::optional<double> time_us_median;      // the GPU's median, else the CPU's
    std::optional<double> tflop_per_joule;     // FLOPs over the energy of a pass; empty without energy
    std::optional<double> grad_rel_error_max;  // the worst of dq, dk, dv; empty unless all three are known
  } derived;

  bool suspect() const { return validity == "suspect"; }
  // The codes of validity_reasons, spelled: power_capped, few_samples.
  std::vector<std::string> validity_codes() const;
  // The derived values under the names the readers have always used.
  std::optional<double> median_us() const { return derived.time_us_median; }
  std::optional<double> tflop_per_joule() const { return derived.tflop_per_joule; }
  std::optional<double> worst_grad_rel_error() const { return derived.grad_rel_error_max; }
};

// The value of one of the cases table's columns in `row`, and how printers show
// it (case_columns.cpp): what the end-of-run table and the report pick by name.
// Throws std::logic_error for a name the table lacks.
Shown case_value(const CaseRow& row, const std::string& column);

}  // namespace attnsweep::storage
