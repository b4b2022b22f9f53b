#pragma once
// Reading a results database back: runs, their cases, and each case's
// kernels, ops and samples, as plain rows of the stored columns typed with the
// identities. The store writes, the reader reads: the file is opened read-only
// and never changed, so a reader can look at a sweep that is still running.
#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "runner/common/errors.hpp"
#include "runner/common/identities.hpp"
#include "runner/measure/case_result.hpp"
#include "runner/plan/case.hpp"
#include "runner/profile/profile_summary.hpp"

namespace attnsweep::storage {

// One row of `runs` (docs/schema.md). Text columns that are NULL read as "".
struct RunRow {
  std::int64_t run_id = 0;
  std::string name, description, config_path, config_yaml, config_sha256;
  RunStatus status = RunStatus::running;
  std::string started_at, finished_at;
  Device device;
  std::string device_name, hostname, torch_version, cuda_version, cudnn_version, driver_version;
  std::string attnsweep_version, git_sha, timing_protocol, flop_convention;
  std::uint64_t seed = 0;
  int planned_cases = 0;
  bool isolate = false;
  CaseOrder case_order = CaseOrder::plan;
  std::optional<double> ceiling_bf16_tflops, ceiling_copy_gbps;
  // The claim (Store::claim_run): the process running the run, its host, when it
  // took it and its last heartbeat (UTC). Empty when no process holds the run.
  std::optional<std::int64_t> owner_pid;
  std::string owner_host, claimed_at, heartbeat_at;
  // Scale-out (docs/scale-out.md): the run's identity across databases, its
  // launch, and for a shard run K of N; a merged run has shard_count and
  // shard_source 'merge'.
  std::string run_uuid, sweep_id, shard_source, shard_split, gpus, container_image;
  std::optional<int> shard_index, shard_count, sweep_cases;
  // The environment fingerprint (docs/schema.md, schema 7): the measurement
  // regime, the GPU's state at the start (NULL on CPU or unknown), and the
  // result-changing environment variables as a JSON object text.
  std::string measure_regime;  // sustained or burst
  std::optional<double> power_limit_w, sm_clock_start_mhz, mem_clock_start_mhz, temperature_start_c;
  std::string env_vars;
  // What cases.trace_path is relative to (storage/trace_location.hpp): database or working_directory.
  std::string trace_path_base;
};

// One row of `cases` (docs/schema.md). Text columns that are NULL read as "";
// nullable numbers are optional.
struct CaseRow {
  std::int64_t case_id = 0, run_id = 0;
  Case identity;  // plan_index, variant, shape, dtype, causal, pass
  Device device;
  CaseStatus status = CaseStatus::ok;
  std::string error_message, warnings, sdpa_backend, timer, stop_reason, graph_error, finished_at;
  // As stored: relative to the run's trace_path_base; storage::trace_file_of (trace_location.hpp) resolves it.
  std::string trace_path;
  std::optional<int> kernels_per_forward, memcpy_per_forward, memset_per_forward, cpu_ops_per_forward;
  std::optional<int> samples, graph_samples, throttled_samples, profile_attempts, profiled_forwards;
  std::optional<bool> counts_consistent, launch_latency_hidden;
  std::optional<double> gpu_time_us_median, cpu_time_us_median, graph_time_us_median;
  std::optional<double> kernel_time_us_per_forward, cpu_dispatch_us_median, rel_error, tflops, bandwidth_gbps;
  std::optional<double> median_ci_rel, sm_clock_mhz_mean, wall_seconds;
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
  std::string validity, validity_reasons;  // empty: not judged (not timed, or stored before schema 11)
  std::optional<int> graph_launches_per_replay;
  std::optional<double> graph_output_rel_diff;
  bool suspect() const { return validity == "suspect"; }
  // The codes of validity_reasons ("power_capped: ...; few_samples: ..." -> power_capped, few_samples).
  std::vector<std::string> validity_codes() const;
  std::string sdpa_backend_backward;
  // Schema 11: the energy window (NULL when not measured): joules per pass, watts,
  // the window's seconds and the passes run in it.
  std::optional<double> energy_j, energy_power_w, energy_window_s;
  std::optional<int> energy_passes;

  // TFLOP per joule, as the results view's tflop_per_joule: the pass's FLOPs over
  // its energy; empty without a positive energy.
  std::optional<double> tflop_per_joule() const {
    if (!energy_j || !(*energy_j > 0)) return std::nullopt;
    return flops / 1e12 / *energy_j;
  }

  // The worst of dq, dk and dv's errors, as the results view's grad_rel_error_max:
  // empty for a forward case, and when any of the three is missing (a gradient
  // that was not finite is stored as NULL; the numerics verdict says nonfinite).
  std::optional<double> worst_grad_rel_error() const {
    if (!grad_rel_error_q || !grad_rel_error_k || !grad_rel_error_v) return std::nullopt;
    return std::max({*grad_rel_error_q, *grad_rel_error_k, *grad_rel_error_v});
  }

  // The case's median time per forward: the GPU's on CUDA, else the CPU's.
  std::optional<double> median_us() const { return gpu_time_us_median ? gpu_time_us_median : cpu_time_us_median; }
};

// A stored value outside what its column can hold (its type, the schema's CHECK
// set, or what the store writes: no negative time, count or size, one length
// per sequence): the database is damaged, bad input (exit 2). One line:
// "FILE: run N, case P (LABEL): cases.COLUMN = VALUE: allowed: WHAT" (docs/schema.md,
// "What readers refuse"). Every read below throws it for the row it reads.
class DamagedDatabaseError : public BadInputError {
 public:
  using BadInputError::BadInputError;
};

class RunReader {
 public:
  // Opens the database at `path` read-only. Throws BadInputError when the file
  // does not exist, is not a regular file, cannot be opened, is not an
  // attnsweep database (recognised as the Store does), or has a schema version
  // other than kSchemaVersion (a newer one is not understood; an older one is
  // migrated by the next Store that opens it).
  explicit RunReader(const std::string& path);
  ~RunReader();
  RunReader(RunReader&&) noexcept;
  RunReader& operator=(RunReader&&) noexcept;
  RunReader(const RunReader&) = delete;
  RunReader& operator=(const RunReader&) = delete;

  std::optional<RunRow> run(std::int64_t run_id) const;
  std::optional<RunRow> latest_run() const;  // the highest run_id
  std::vector<RunRow> runs() const;          // by run_id

  std::vector<CaseRow> cases(std::int64_t run_id) const;  // by plan_index
  std::set<int> stored_plan_indexes(std::int64_t run_id) const;

  std::vector<KernelStat> kernels(std::int64_t case_id) const;  // in the order stored
  std::vector<OpStat> ops(std::int64_t case_id) const;          // in the order stored
  // Eager samples, then graph replays, each by sample_index.
  std::vector<TimingSample> samples(std::int64_t case_id) const;

  // Reads every stored value of the run: its row, its cases and their samples,
  // kernels and ops. Throws DamagedDatabaseError at the first out of its domain;
  // nightly, history and merge check a night or shard whole before using any of it.
  void check_run(std::int64_t run_id) const;

  const std::string& path() const { return path_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string path_;
};

// RunRow::env_vars (a JSON object of name -> value) as a map; a text that is not
// a JSON object is one value under the name "". Compare and merge read it alike.
std::map<std::string, std::string> env_vars_of(const std::string& json_text);

}  // namespace attnsweep::storage
