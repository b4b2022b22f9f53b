#pragma once
// One row of `runs` (docs/schema.md): the record a run is stored as and read
// back as. The store makes it from a RunRecord at the run's start
// (run_record in run_columns.hpp) and writes it through the column table;
// the reader reads it through the same table. Text columns that are NULL read
// as ""; nullable numbers are optional.
#include <cstdint>
#include <optional>
#include <string>

#include "runner/common/identities.hpp"

namespace attnsweep::storage {

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
  // The device's sizes and top SM clock (NULL when unknown).
  std::optional<int> sm_count, sm_clock_max_mhz;
  std::optional<std::int64_t> device_memory_bytes, l2_cache_bytes;
  // The measure settings as stored (docs/config.md): NULL where one does not
  // apply (the GPU's on a CPU run, case_timeout_s without --isolate, the
  // burst cool-down in the sustained regime).
  std::optional<int> warmup, profiled_forwards, min_samples, max_samples;
  std::optional<double> target_rel_stdev, max_case_seconds, case_timeout_s, min_gpu_seconds, throttle_fraction;
  std::optional<double> graph_target_median_ci;  // NULL on the CPU and without graphs
  std::optional<bool> l2_flush, cuda_graph, hide_launch_latency;
  std::optional<double> burst_cooldown_max_ms;
  // The claim (Store::claim_run): the process running the run, its host, when it
  // took it and its last heartbeat (UTC). Empty when no process holds the run.
  std::optional<std::int64_t> owner_pid;
  std::string owner_host, claimed_at, heartbeat_at;
  // Scale-out (docs/scale-out.md): the run's identity across databases, its
  // launch, and for a shard run K of N; a merged run has shard_count and
  // shard_source 'merge'.
  std::string run_uuid, sweep_id, shard_source, shard_split, gpus, container_image;
  std::string op_libraries;  // JSON object: each op library's build (schema 22); empty when none
  std::optional<int> shard_index, shard_count, sweep_cases;
  // The environment fingerprint (docs/schema.md, schema 7): the measurement
  // regime, the GPU's state at the start (NULL on CPU or unknown), and the
  // result-changing environment variables as a JSON object text.
  std::string measure_regime;  // sustained or burst
  std::optional<double> power_limit_w, sm_clock_start_mhz, mem_clock_start_mhz, temperature_start_c;
  std::optional<std::uint64_t> clock_event_reasons_start;  // NVML's reasons bits; NULL without a start clock
  std::optional<int> other_processes_start;                // compute processes besides this one; NULL when unknown
  std::optional<double> gpu_utilization_start_pct;
  std::string env_vars;
  // What cases.trace_path is relative to (runner/storage/trace_location.hpp): database or working_directory.
  std::string trace_path_base;
};

}  // namespace attnsweep::storage
