-- attnsweep results database, schema version 22 (PRAGMA user_version = 22), marked as attnsweep's by
-- PRAGMA application_id = 1635021934 (0x6174746E, 'attn'); the store sets both when it creates or migrates a file.
-- This file is the public contract: docs/schema.md documents every column.
-- Units are in the names: _us microseconds, _bytes bytes, _ns nanoseconds.
-- It always describes the newest version; a change means a new version number, and older files
-- are rebuilt into it by runner/storage/migrations.cpp (tested from a saved database of every earlier
-- version), so columns added later must be nullable or have a default.
-- Version history: 1 first release; 2 cases.status gains 'crashed' and 'timeout' (--isolate),
-- runs gains isolate and case_timeout_s; 3 timing protocol v2 (L2 flush, blocking kernel,
-- CUDA-graph replay, SM clock per sample, device ceilings, per-kernel launch metadata); 4 cases
-- gains median_ci_rel and the wall seconds of each phase of a case (setup_seconds ... profile_seconds),
-- runs gains case_order; 5 the application_id, and runs gains the claim of the process running it
-- (owner_pid, owner_host, claimed_at, heartbeat_at); 6 scale-out: runs gains run_uuid, sweep_id, the
-- shard columns (shard_index, shard_count, shard_source, shard_split, sweep_cases), gpus and container_image, status
-- 'incomplete' (a merged run missing shards); cases gains gpu_uuid and shard_index; new tables
-- run_devices (environment and ceilings per GPU and shard) and merged_shards (what attnsweep merge took in);
-- 7 the environment fingerprint and power regime: runs and run_devices gain power_limit_w, the clocks,
-- temperature and clock event reasons at start and env_vars; runs gains measure_regime and
-- burst_cooldown_max_ms; cases gains power_cap_share, thermal_cap_share and cooldown_seconds;
-- samples gains clock_event_reasons; 8 cases.trace_path is stored relative to the database file's folder,
-- said by the new runs.trace_path_base ('working_directory' for runs made before, stored as given);
-- 9 hardening round three: cases gains numerics and numerics_bound (the numerics verdict),
-- other_processes (other compute processes on the GPU during the case) and cooldown_budget_exhausted;
-- runs and run_devices gain other_processes_start and gpu_utilization_start_pct;
-- 10 the pass axis (issue 23): cases gains pass ('forward' for every older case), grad_rel_error_q,
-- grad_rel_error_k, grad_rel_error_v and sdpa_backend_backward (NULL until the backward is measured);
-- the results view gains pass and the three gradient errors; 11 trust signals (issue 24): cases gains validity
-- ('ok' or 'suspect'), validity_reasons, graph_launches_per_replay and graph_output_rel_diff (NULL for older
-- cases: never judged), and the results view gains validity and validity_reasons; also energy per pass:
-- cases gains energy_j, energy_power_w, energy_window_s and energy_passes (NULL unless
-- measure.energy_window_ms was set on a GPU with NVML's energy counter), and the results view gains
-- energy_j, energy_power_w and tflop_per_joule; 12 serving masks (issue 25): cases gains causal_bottom_right,
-- window_left and window_right, the results view mask, tokens_per_s and us_per_token; 13 variable-length
-- batches and paged KV caches (issue 25): cases gains seq_lens_q, seq_lens_kv (NULL for uniform batches),
-- page_size (0: contiguous) and query_tokens (NULL for older cases: batch x seq_len_q), and the results view them;
-- 14 the CUDA-graph replays' own stopping rule (issue 35): runs gains graph_target_median_ci, cases gains
-- graph_median_ci_rel and graph_stop_reason (NULL for older runs and cases, whose replays stopped by the eager rule);
-- 15 the value head dim (issue 36): cases gains head_dim_v (0: the same as head_dim, as in every older case), the
-- results view head_dim_v as the values' head dim itself; 16 soft-capping (issue 36): cases and the results view
-- gain softcap (NULL: none, as in every older case); 17 ALiBi, attention sinks and deterministic algorithms (issue
-- 36): cases and the results view gain alibi, sinks and deterministic (0: off, as in every older case); 18 fp8
-- (issue 36): cases.dtype allows 'fp8_e4m3' and 'fp8_e5m2', and cases and the results view gain rel_error_dequantized
-- (NULL but for fp8 cases); 19 published claims (issue 37): a new table claims (every claim of the config's claims
-- files, matched to a case of the run by plan_index or not), the results view gains claimed_tflops, claim_source and
-- claim_ratio, a new view claim_results (a claim with its case), and a new view choice (the fastest variant per case
-- group, its lead, and PyTorch's own choice against it); 20 (issue 37) the choice view's auto_verdict gains
-- 'faster' (PyTorch's choice ran a backend no timed variant pins, and faster than every one, intervals apart),
-- and 'fastest' means only that it chose the fastest variant's backend (a faster time within the intervals is 'tie');
-- 21 hardware counters (issue 39): cases gains dram_read_bytes ... counters_why_not, kernels the first five, the
-- results view the counters, dram_bandwidth_gbps, dram_bandwidth_share and bytes_over_min; 22 (issue 38) runs gains
-- op_libraries (each op library's build, for history's version facts).

CREATE TABLE IF NOT EXISTS runs (
  run_id             INTEGER PRIMARY KEY,
  name               TEXT NOT NULL,
  description        TEXT,
  config_path        TEXT,
  config_yaml        TEXT NOT NULL,            -- the config file's exact text
  config_sha256      TEXT NOT NULL,
  status             TEXT NOT NULL CHECK (status IN ('running', 'done', 'failed', 'interrupted', 'incomplete')),
  started_at         TEXT NOT NULL,            -- UTC, ISO 8601
  finished_at        TEXT,
  device             TEXT NOT NULL,            -- cpu, cuda:0
  device_name        TEXT,                     -- NVIDIA H200, or the CPU model
  sm_count           INTEGER,
  device_memory_bytes INTEGER,
  l2_cache_bytes     INTEGER,
  torch_version      TEXT,
  cuda_version       TEXT,                     -- CUDA runtime in use; NULL on CPU runs
  cudnn_version      TEXT,
  driver_version     TEXT,                     -- NVIDIA driver, from NVML
  hostname           TEXT,
  attnsweep_version  TEXT NOT NULL,
  git_sha            TEXT,
  seed               INTEGER NOT NULL,
  timing_protocol    TEXT NOT NULL,            -- how each timing sample was taken
  flop_convention    TEXT NOT NULL,            -- how flops and min_bytes are counted
  warmup             INTEGER NOT NULL,
  profiled_forwards  INTEGER NOT NULL,
  min_samples        INTEGER NOT NULL,
  max_samples        INTEGER NOT NULL,
  target_rel_stdev   REAL NOT NULL,
  max_case_seconds   REAL NOT NULL,
  planned_cases      INTEGER NOT NULL,
  isolate            INTEGER NOT NULL DEFAULT 0, -- 1: each case ran in its own worker process
  case_timeout_s     REAL,                      -- per-case limit with --isolate; NULL without
  l2_flush           INTEGER,                   -- 1: the L2 cache was flushed before every timed sample
  cuda_graph         INTEGER,                   -- 1: CUDA-graph replays were timed too
  hide_launch_latency INTEGER,                  -- 1: a blocking kernel held the stream while the host enqueued
  min_gpu_seconds    REAL,                      -- stopping rule: least summed time of the samples
  graph_target_median_ci REAL,                  -- CUDA-graph replays stop once their median's 95% interval half-width is
                                                --   at most this share of it; NULL on CPU, without graphs, before version 14
  throttle_fraction  REAL,                      -- samples under this share of the max SM clock are discarded
  sm_clock_max_mhz   INTEGER,                   -- the GPU's maximum SM clock (NVML)
  ceiling_bf16_tflops REAL,                     -- measured at run start: bf16 matmul on random data
  ceiling_copy_gbps  REAL,                      -- measured at run start: device-to-device copy, read + write bytes
  case_order         TEXT NOT NULL DEFAULT 'plan' CHECK (case_order IN ('plan', 'shuffled')),
                                                -- order the cases ran in; cases.case_id follows it
  owner_pid          INTEGER,                   -- the claim: process running the run (attnsweep run, --resume);
  owner_host         TEXT,                      --   its host (gethostname); all four NULL when no process holds it
  claimed_at         TEXT,                      --   UTC, ISO 8601: when it took the run
  heartbeat_at       TEXT,                      --   UTC, ISO 8601: its last sign of life; older than 10 min is stale
  run_uuid           TEXT,                      -- random, unique across databases: what merge tells shard runs apart by
  sweep_id           TEXT,                      -- shared by the shards of one launch (--sweep-id, ATTNSWEEP_SWEEP_ID,
                                                --   SLURM_ARRAY_JOB_ID); NULL when none was given
  shard_index        INTEGER,                   -- K of --shard K/N (0-based); NULL when not a shard (and for a merged run)
  shard_count        INTEGER,                   -- N; set for shard runs and merged runs, NULL otherwise
  shard_source       TEXT,                      -- what set the shard: --shard, JOB_COMPLETION_INDEX, SLURM_ARRAY_TASK_ID,
                                                --   or 'merge' for a run made by attnsweep merge
  shard_split        TEXT,                      -- version of the deterministic split (cost_lpt_v1)
  sweep_cases        INTEGER,                   -- cases in the whole plan; planned_cases counts this run's part
  gpus               TEXT,                      -- --gpus: the devices the run used, e.g. cuda:0,cuda:1; NULL for one device
  container_image    TEXT,                      -- the image it ran in (ATTNSWEEP_IMAGE, set by container/Dockerfile); NULL outside
  op_libraries       TEXT,                      -- JSON object: op_library variant -> 16 hex digits of its library's SHA-256;
                                                --   NULL when the config declares none (schema 22)
  measure_regime     TEXT NOT NULL DEFAULT 'sustained' CHECK (measure_regime IN ('sustained', 'burst')),
                                                -- sustained: samples back to back; burst: a cool-down before each
  burst_cooldown_max_ms REAL,                   -- burst: the longest cool-down before one sample; NULL when sustained
  power_limit_w      REAL,                      -- the GPU's state when the run started (NVML; NULL on CPU or unknown):
  sm_clock_start_mhz REAL,                      --   enforced power limit, SM and memory clocks, core temperature
  mem_clock_start_mhz REAL,
  temperature_start_c REAL,
  clock_event_reasons_start INTEGER,            --   NVML clock event reasons bits (docs/schema.md)
  env_vars           TEXT,                      -- JSON object: the set environment variables that change results
  other_processes_start INTEGER,                -- compute processes on the GPU besides attnsweep's when it started (NVML)
  gpu_utilization_start_pct REAL,               -- NVML's GPU utilization (any process) when it started
  trace_path_base    TEXT NOT NULL DEFAULT 'working_directory'
                     CHECK (trace_path_base IN ('database', 'working_directory'))
                                                -- what cases.trace_path is relative to: the database file's folder
                                                --   (runs from schema 8 on), or the directory the run started in (before)
);

CREATE TABLE IF NOT EXISTS cases (
  case_id            INTEGER PRIMARY KEY,
  run_id             INTEGER NOT NULL REFERENCES runs(run_id),
  plan_index         INTEGER NOT NULL,         -- position in the run's plan
  variant            TEXT NOT NULL,
  batch              INTEGER NOT NULL,
  heads              INTEGER NOT NULL,
  kv_heads           INTEGER NOT NULL,
  seq_len_q          INTEGER NOT NULL,
  seq_len_kv         INTEGER NOT NULL,
  head_dim           INTEGER NOT NULL,
  dtype              TEXT NOT NULL CHECK (dtype IN ('bf16', 'fp16', 'fp32', 'fp8_e4m3', 'fp8_e5m2')),
  causal             INTEGER NOT NULL CHECK (causal IN (0, 1)),
  causal_bottom_right INTEGER NOT NULL DEFAULT 0 CHECK (causal_bottom_right IN (0, 1)),
                                               -- 1: the causal mask is aligned to the bottom right (version 12)
  window_left        INTEGER CHECK (window_left >= 0),   -- sliding window: keys before the diagonal; NULL: no bound
  window_right       INTEGER CHECK (window_right >= 0),  -- keys after it; NULL: no bound (0 under a causal mask)
  seq_lens_q         TEXT,                     -- a variable-length batch: each sequence's query length, '1,1,4'
  seq_lens_kv        TEXT,                     -- and key/value length; NULL for a uniform batch (version 13)
  page_size          INTEGER NOT NULL DEFAULT 0 CHECK (page_size >= 0),  -- keys per page of a paged KV cache; 0: contiguous
  head_dim_v         INTEGER NOT NULL DEFAULT 0 CHECK (head_dim_v >= 0), -- the values' (and output's) head dim where it
                                               --   differs from head_dim (MLA: 192/128); 0: the same (version 15)
  softcap            REAL CHECK (softcap > 0), -- soft-capping of the scaled scores, cap * tanh(s / cap); NULL: none (16)
  alibi              INTEGER NOT NULL DEFAULT 0 CHECK (alibi IN (0, 1)),  -- ALiBi's per-head linear biases (17)
  sinks              INTEGER NOT NULL DEFAULT 0 CHECK (sinks IN (0, 1)),  -- a sink logit per head in the softmax (17)
  deterministic      INTEGER NOT NULL DEFAULT 0 CHECK (deterministic IN (0, 1)),  -- PyTorch's deterministic
                                               --   algorithms on for the case (17)
  query_tokens       INTEGER,                  -- queries that are not padding: sum of seq_lens_q, else batch x seq_len_q
  pass               TEXT NOT NULL DEFAULT 'forward' CHECK (pass IN ('forward', 'backward', 'forward_backward')),
                                               -- what the case times; every case before version 10 is a forward
  device             TEXT NOT NULL,
  status             TEXT NOT NULL CHECK (status IN ('ok', 'unsupported', 'oom', 'error', 'crashed', 'timeout')),
  error_message      TEXT,                     -- PyTorch's reason when status is not ok
  warnings           TEXT,                     -- measurement warnings, '; '-separated
  sdpa_backend       TEXT,                     -- backend that ran (sdpa_* variants)
  timer              TEXT,                     -- cuda_event or steady_clock
  stop_reason        TEXT,                     -- target_rel_stdev, noise_converged, max_case_seconds, max_samples
  kernels_per_forward INTEGER,                 -- GPU kernel launches per forward; NULL on CPU
  memcpy_per_forward INTEGER,                  -- GPU memcpy per forward; NULL on CPU
  memset_per_forward INTEGER,                  -- GPU memset per forward; NULL on CPU
  cpu_ops_per_forward INTEGER,                 -- aten operator calls per forward (all devices)
  counts_consistent  INTEGER,                  -- 1 when every profiled forward had the same counts
  profile_attempts   INTEGER,
  profiled_forwards  INTEGER,
  kernel_time_us_per_forward REAL,             -- sum of GPU activity durations per forward (profiler)
  gpu_time_us_median REAL,                     -- CUDA events per forward; NULL on CPU
  gpu_time_us_p10    REAL,
  gpu_time_us_p90    REAL,
  gpu_time_us_min    REAL,
  gpu_time_us_mean   REAL,
  gpu_time_us_stdev  REAL,
  cpu_time_us_median REAL,                     -- wall time per forward on the CPU device; NULL on CUDA
  cpu_time_us_p10    REAL,
  cpu_time_us_p90    REAL,
  cpu_time_us_min    REAL,
  cpu_time_us_mean   REAL,
  cpu_time_us_stdev  REAL,
  samples            INTEGER,                  -- timed samples taken
  cpu_dispatch_us_median REAL,                 -- time for the forward call to return (host cost)
  rel_error          REAL,                     -- ||out - ref||_F / ||ref||_F, ref in float64 (of the bf16 draw for fp8)
  rel_error_dequantized REAL,                  -- fp8: the same against float64 of the dequantised inputs (the kernel's
                                               --   own error, without the quantisation's); NULL for other dtypes
  peak_mem_bytes     INTEGER,                  -- CUDA caching allocator peak; NULL on CPU
  flops              REAL NOT NULL,            -- per forward, runs.flop_convention
  min_bytes          REAL NOT NULL,            -- per forward, runs.flop_convention
  tflops             REAL,                     -- flops / median time
  bandwidth_gbps     REAL,                     -- min_bytes / median time, 1e9 bytes/s
  trace_path         TEXT,                     -- Chrome trace (Perfetto) when traces are on; relative to runs.trace_path_base
  wall_seconds       REAL,                     -- wall time spent on the case
  finished_at        TEXT NOT NULL,
  graph_time_us_median REAL,                   -- CUDA-graph replay of one captured forward; NULL when not timed
  graph_time_us_p10  REAL,
  graph_time_us_p90  REAL,
  graph_time_us_min  REAL,
  graph_samples      INTEGER,
  graph_median_ci_rel REAL,                    -- half-width of the replays' median's 95% interval / that median
  graph_stop_reason  TEXT,                     -- why the replays stopped: median_ci, max_case_seconds, max_samples
  graph_error        TEXT,                     -- why the forward could not be captured or replayed
  graph_launches_per_replay INTEGER,           -- kernels and copies one profiled CUDA-graph replay launched (compare
                                               --   with kernels_per_forward + memcpy_per_forward: a graph may run a
                                               --   copy as a kernel); NULL when not replayed or not recorded
  graph_output_rel_diff REAL,                  -- ||replays' output - eager output||_F / ||eager||_F after the
                                               --   replays (dq, dk, dv: the largest); NULL when not checked or not finite
  sm_clock_mhz_mean  REAL,                     -- mean SM clock over the kept eager samples
  throttled_samples  INTEGER,                  -- eager samples discarded for a clock under the throttle fraction
  launch_latency_hidden INTEGER,               -- 1: kept samples were blocked (launch latency outside the interval)
  median_ci_rel      REAL,                     -- half-width of the 95% CI of the eager median, relative to it
  setup_seconds      REAL,                     -- wall seconds per phase of the case: inputs and support check,
  accuracy_seconds   REAL,                     --   float64 comparison,
  warmup_seconds     REAL,                     --   warm-up forwards,
  timing_seconds     REAL,                     --   eager samples,
  graph_seconds      REAL,                     --   graph capture and replay samples,
  profile_seconds    REAL,                     --   profiling sessions and attribution
  gpu_uuid           TEXT,                     -- the GPU that measured the case (GPU-...); NULL on CPU
  shard_index        INTEGER,                  -- the shard that measured it (runs.shard_index of its shard run)
  power_cap_share    REAL,                     -- share of the kept eager samples read under a power cap (NVML
  thermal_cap_share  REAL,                     --   reasons), and under a thermal slowdown; NULL when unknown
  cooldown_seconds   REAL,                     -- burst regime: wall seconds of cool-down before samples
  cooldown_budget_exhausted INTEGER,           -- burst: 1 when the case's or the run's cool-down allowance ran out
  numerics           TEXT CHECK (numerics IN ('ok', 'beyond_bound', 'nonfinite')),
                                               -- the output against float64: rel_error within numerics_bound, above
                                               --   it, or NaN/Inf in the output; NULL when not checked or not ok
  numerics_bound     REAL,                     -- the dtype's rel_error bound the verdict used (docs/measurement.md)
  other_processes    INTEGER,                  -- other compute processes on the GPU during the case (NVML); >0: times
                                               --   are not the GPU's alone and compare/nightly do not judge them
  validity           TEXT CHECK (validity IN ('ok', 'suspect')),
                                               -- can the timed numbers be trusted (docs/measurement.md, "Validity");
                                               --   NULL when the case was not timed (status not ok) or predates v11
  validity_reasons   TEXT,                     -- suspect: 'code: detail' joined by '; ' (codes: docs/schema.md)
  grad_rel_error_q   REAL,                     -- backward passes: ||dq - dq_ref||_F / ||dq_ref||_F, ref by float64
  grad_rel_error_k   REAL,                     --   autograd on the same inputs and upstream gradient; likewise dk
  grad_rel_error_v   REAL,                     --   and dv. NULL for forward cases and until the backward is measured
  sdpa_backend_backward TEXT,                  -- sdpa_* backward passes: the backend that ran the backward
  energy_j           REAL,                     -- joules per pass from NVML's energy counter over the energy window
  energy_power_w     REAL,                     --   (measure.energy_window_ms), and the average power in it, watts;
  energy_window_s    REAL,                     --   the window's host seconds between two steps of the counter and
  energy_passes      INTEGER,                  --   the passes run in it. NULL on CPU, without the counter, for
                                               --   backward cases and when the window is off (docs/measurement.md)
  -- Hardware counters of one more pass under CUPTI's range profiler (measure.counters; schema 21;
  -- docs/measurement.md "Counters"), never a timed one. NULL when not asked, or not read (then
  -- counters_why_not says why), or a counter not asked. Bytes per pass; shares 0..1.
  dram_read_bytes    REAL CHECK (dram_read_bytes >= 0),
  dram_write_bytes   REAL CHECK (dram_write_bytes >= 0),  -- L2 is write-back: what the pass left dirty in L2 is not here
  l2_hit_rate        REAL CHECK (l2_hit_rate >= 0),                 -- the kernels' hit rates, weighted by sectors
  sm_throughput      REAL CHECK (sm_throughput >= 0),               -- of the SMs' peak, weighted by kernel time
  tensor_pipe        REAL CHECK (tensor_pipe >= 0),                 -- of the busier tensor pipe's peak, likewise
  counter_launches   INTEGER CHECK (counter_launches >= 0),         -- kernel launches the counter pass read
  counter_kernel_us  REAL CHECK (counter_kernel_us >= 0),           -- their summed durations (replayed: not a time)
  counter_replay_passes INTEGER CHECK (counter_replay_passes >= 0), -- CUPTI ran each kernel this many times
  counter_seconds    REAL CHECK (counter_seconds >= 0),             -- the counter pass's wall time
  counters_why_not   TEXT,                     -- asked for but not read: why, in one line
  UNIQUE (run_id, plan_index)
);

CREATE TABLE IF NOT EXISTS kernels (
  case_id            INTEGER NOT NULL REFERENCES cases(case_id),
  name               TEXT NOT NULL,
  kind               TEXT NOT NULL CHECK (kind IN ('kernel', 'memcpy', 'memset')),
  launches_per_forward REAL NOT NULL,
  total_us           REAL NOT NULL,            -- summed duration per forward
  mean_us            REAL NOT NULL,            -- per launch
  min_us             REAL NOT NULL,
  max_us             REAL NOT NULL,
  stream             INTEGER,
  grid               TEXT,                     -- launch metadata from Kineto (kernels only), e.g. [8, 8, 16]
  block              TEXT,
  registers_per_thread INTEGER,
  shared_memory_bytes INTEGER,
  blocks_per_sm      REAL,
  warps_per_sm       REAL,
  est_occupancy_pct  REAL,                     -- Kineto's estimated achieved occupancy
  -- Hardware counters of this name's launches in the counter pass (schema 21), per forward: as in cases.
  dram_read_bytes    REAL,
  dram_write_bytes   REAL,
  l2_hit_rate        REAL,
  sm_throughput      REAL,
  tensor_pipe        REAL,
  PRIMARY KEY (case_id, kind, name)
);

CREATE TABLE IF NOT EXISTS ops (
  case_id            INTEGER NOT NULL REFERENCES cases(case_id),
  name               TEXT NOT NULL,
  kind               TEXT NOT NULL CHECK (kind IN ('op', 'cuda_runtime', 'cuda_driver')),
  calls_per_forward  REAL NOT NULL,
  self_cpu_us        REAL NOT NULL,            -- per forward, children excluded
  total_cpu_us       REAL NOT NULL,            -- per forward, children included
  PRIMARY KEY (case_id, kind, name)
);

CREATE TABLE IF NOT EXISTS samples (
  case_id            INTEGER NOT NULL REFERENCES cases(case_id),
  sample_index       INTEGER NOT NULL,
  gpu_time_us        REAL,                     -- CUDA events; NULL on CPU
  cpu_time_us        REAL,                     -- steady clock on the CPU device; NULL on CUDA
  host_dispatch_us   REAL,                     -- time for the call to return; NULL for graph replays
  mode               TEXT NOT NULL DEFAULT 'eager' CHECK (mode IN ('eager', 'graph')),
  sm_clock_mhz       REAL,                     -- SM clock read right after the sample (NVML)
  throttled          INTEGER NOT NULL DEFAULT 0, -- 1: clock under the throttle fraction, left out of the statistics
  blocked            INTEGER NOT NULL DEFAULT 0, -- 1: the blocking kernel held the stream during enqueueing
  block_timed_out    INTEGER NOT NULL DEFAULT 0, -- 1: the forward waited on the GPU; left out of the statistics
  clock_event_reasons INTEGER,                 -- NVML clock event reasons bits read with the clock; NULL unknown
  PRIMARY KEY (case_id, mode, sample_index)
);

-- The devices a run measured on, one row per GPU (or the CPU) and shard: the
-- environment and ceilings of each. cases join on (run_id, shard_index, device).
CREATE TABLE IF NOT EXISTS run_devices (
  run_id             INTEGER NOT NULL REFERENCES runs(run_id),
  shard_index        INTEGER,                  -- NULL for a run that is not a shard or merged
  device             TEXT NOT NULL,            -- cpu, cuda:N as the measuring process saw it
  gpu_uuid           TEXT,
  device_name        TEXT,
  hostname           TEXT,
  sm_count           INTEGER,
  device_memory_bytes INTEGER,
  l2_cache_bytes     INTEGER,
  sm_clock_max_mhz   INTEGER,
  driver_version     TEXT,
  cuda_version       TEXT,
  cudnn_version      TEXT,
  torch_version      TEXT,
  ceiling_bf16_tflops REAL,                    -- measured on this GPU when its process started
  ceiling_copy_gbps  REAL,
  recorded_at        TEXT NOT NULL,
  power_limit_w      REAL,                     -- as in runs, for this GPU when its process started
  sm_clock_start_mhz REAL,
  mem_clock_start_mhz REAL,
  temperature_start_c REAL,
  clock_event_reasons_start INTEGER,
  env_vars           TEXT,
  other_processes_start INTEGER,
  gpu_utilization_start_pct REAL
);
CREATE UNIQUE INDEX IF NOT EXISTS run_devices_key ON run_devices(run_id, ifnull(shard_index, -1), device);

-- What attnsweep merge took into a merged run: one row per shard.
CREATE TABLE IF NOT EXISTS merged_shards (
  run_id             INTEGER NOT NULL REFERENCES runs(run_id),
  shard_index        INTEGER NOT NULL,
  source_run_uuid    TEXT NOT NULL,            -- runs.run_uuid of the shard run
  source_db          TEXT NOT NULL,            -- the file it was merged from, as given
  source_run_id      INTEGER NOT NULL,
  source_status      TEXT NOT NULL,            -- the shard run's status when merged
  planned_cases      INTEGER NOT NULL,         -- the shard's cases
  merged_cases       INTEGER NOT NULL,         -- of those, stored in the merged run
  merged_at          TEXT NOT NULL,
  PRIMARY KEY (run_id, shard_index)
);

-- Published figures the run is measured against (issue 37; docs/config.md "Claims"): one row per claim of
-- the config's claims files, as read when the run began, matched to the run's case of the same
-- measurement (variant, shape, dtype, mask, score modifications, determinism, pass) or not.
CREATE TABLE IF NOT EXISTS claims (
  claim_id           INTEGER PRIMARY KEY,
  run_id             INTEGER NOT NULL REFERENCES runs(run_id),
  claims_file        TEXT NOT NULL,            -- as the config's `claims` names it
  name               TEXT NOT NULL,            -- unique in its file
  source_title       TEXT NOT NULL,            -- where the figure was published
  source_repository  TEXT,
  source_path        TEXT,
  source_commit      TEXT,
  source_url         TEXT,
  source_where       TEXT,                     -- 'Figure 5', 'file.csv row 3'
  claimed_gpu        TEXT,                     -- the GPU it was measured on, as the source names it
  claimed_software   TEXT,                     -- 'cudnn 9.19.0, torch 2.8.0' as the source states it
  note               TEXT,
  variant            TEXT NOT NULL,
  case_label         TEXT NOT NULL,            -- the claim's case as attnsweep labels cases
  claimed_tflops     REAL CHECK (claimed_tflops > 0),
  claimed_time_us    REAL CHECK (claimed_time_us > 0),
  plan_index         INTEGER,                  -- the run's case of the same measurement; NULL: none
  unmatched_reason   TEXT,                     -- why none (NULL when matched)
  CHECK (claimed_tflops IS NOT NULL OR claimed_time_us IS NOT NULL),
  CHECK ((plan_index IS NULL) <> (unmatched_reason IS NULL)),
  UNIQUE (run_id, claims_file, name)
);

CREATE INDEX IF NOT EXISTS cases_by_run ON cases(run_id);
CREATE INDEX IF NOT EXISTS claims_by_case ON claims(run_id, plan_index);

-- Everyday queries: one row per case with its run's context.
CREATE VIEW IF NOT EXISTS results AS
SELECT
  r.run_id, r.name AS run_name, r.started_at, r.device_name, r.torch_version,
  c.case_id, c.plan_index, c.variant, c.batch, c.heads, c.kv_heads, c.seq_len_q, c.seq_len_kv, c.head_dim,
  c.dtype, c.causal, c.pass, c.device, c.status, c.sdpa_backend,
  c.causal_bottom_right, c.window_left, c.window_right,
  c.seq_lens_q, c.seq_lens_kv, c.page_size,
  CASE WHEN c.head_dim_v > 0 THEN c.head_dim_v ELSE c.head_dim END AS head_dim_v,  -- the values' head dim
  c.softcap,                                   -- NULL: no soft-capping
  c.alibi, c.sinks,                            -- 1: ALiBi's biases, attention sinks
  c.deterministic,                             -- 1: PyTorch's deterministic algorithms on
  COALESCE(c.query_tokens, c.batch * c.seq_len_q) AS query_tokens,
  -- the mask as attnsweep labels it: 'full', 'causal', 'causal_bottom_right', with a window ' window[L,R]'
  CASE WHEN c.causal = 0 AND c.window_left IS NULL AND c.window_right IS NULL THEN 'full'
       ELSE trim(CASE WHEN c.causal = 0 THEN '' WHEN c.causal_bottom_right = 1 THEN 'causal_bottom_right' ELSE 'causal' END ||
                 CASE WHEN c.window_left IS NULL AND c.window_right IS NULL THEN ''
                      ELSE ' window[' || ifnull(c.window_left, 'inf') || ',' || ifnull(c.window_right, 'inf') || ']' END)
  END AS mask,
  c.kernels_per_forward, c.memcpy_per_forward, c.memset_per_forward, c.cpu_ops_per_forward,
  COALESCE(c.gpu_time_us_median, c.cpu_time_us_median) AS time_us_median,
  -- query tokens (query_tokens: batch x seq_len_q, or the sum of a variable-length batch's) per second of
  -- the median pass, and microseconds per token: for decoding, new tokens per second across the batch
  COALESCE(c.query_tokens, c.batch * c.seq_len_q) / (COALESCE(c.gpu_time_us_median, c.cpu_time_us_median) * 1e-6) AS tokens_per_s,
  COALESCE(c.gpu_time_us_median, c.cpu_time_us_median) / COALESCE(c.query_tokens, c.batch * c.seq_len_q) AS us_per_token,
  c.median_ci_rel,                                          -- the median is known to +- this share (95%)
  c.gpu_time_us_median, c.cpu_time_us_median, c.cpu_dispatch_us_median,
  c.graph_time_us_median, c.tflops, c.bandwidth_gbps,
  -- shares of the ceilings measured on the GPU that ran the case (run_devices), else at run start
  c.tflops / COALESCE(d.ceiling_bf16_tflops, r.ceiling_bf16_tflops) AS tflops_share,
  c.bandwidth_gbps / COALESCE(d.ceiling_copy_gbps, r.ceiling_copy_gbps) AS bandwidth_share,
  c.sm_clock_mhz_mean, c.throttled_samples, c.power_cap_share, c.thermal_cap_share, c.launch_latency_hidden, c.rel_error,
  c.rel_error_dequantized,                                  -- fp8: the error against the dequantised inputs
  c.peak_mem_bytes, c.samples,
  c.counts_consistent, c.error_message, c.trace_path, c.gpu_uuid, c.shard_index,
  c.numerics, c.numerics_bound, c.other_processes,
  c.validity, c.validity_reasons,                           -- 'ok' or 'suspect' and why (docs/measurement.md)
  -- this case's rel_error over the smallest of the run's variants at the same shape, dtype, mask and pass
  c.rel_error / min(CASE WHEN c.rel_error > 0 THEN c.rel_error END) OVER (PARTITION BY c.run_id, c.batch, c.heads,
     c.kv_heads, c.seq_len_q, c.seq_len_kv, c.head_dim, c.dtype, c.causal, c.causal_bottom_right, c.window_left, c.window_right,
     c.seq_lens_q, c.seq_lens_kv, c.page_size, c.head_dim_v, c.softcap, c.alibi, c.sinks, c.deterministic, c.pass,
     c.device)
     AS rel_error_vs_best,
  c.grad_rel_error_q, c.grad_rel_error_k, c.grad_rel_error_v,
  max(c.grad_rel_error_q, c.grad_rel_error_k, c.grad_rel_error_v) AS grad_rel_error_max,  -- the worst gradient
  c.sdpa_backend_backward,
  c.energy_j, c.energy_power_w,                             -- joules per pass and watts (NULL when not measured)
  c.flops / 1e12 / c.energy_j AS tflop_per_joule,
  -- hardware counters (schema 21; NULL unless measure.counters read them): DRAM bytes of a pass, the
  -- bandwidth they make over the median time and its share of the measured copy ceiling, and the
  -- bytes moved over the minimum (q, k, v read once, the output written once: 1.0 is a perfect kernel)
  c.dram_read_bytes, c.dram_write_bytes,
  (c.dram_read_bytes + c.dram_write_bytes) / (COALESCE(c.gpu_time_us_median, c.cpu_time_us_median) * 1e3)
     AS dram_bandwidth_gbps,
  (c.dram_read_bytes + c.dram_write_bytes) / (COALESCE(c.gpu_time_us_median, c.cpu_time_us_median) * 1e3)
     / COALESCE(d.ceiling_copy_gbps, r.ceiling_copy_gbps) AS dram_bandwidth_share,
  (c.dram_read_bytes + c.dram_write_bytes) / NULLIF(c.min_bytes, 0) AS bytes_over_min,
  c.l2_hit_rate, c.sm_throughput, c.tensor_pipe, c.counters_why_not,
  -- the published figure of this case (claims; the first claim where several match), and the measured
  -- performance over the claimed: by time where the claim gives one (no FLOP convention in between), else
  -- by TFLOP/s; > 1: faster than claimed. NULL unless the case is ok and timed.
  cl.claimed_tflops,
  cl.source_title || ifnull(' (' || cl.source_where || ')', '') AS claim_source,
  CASE WHEN c.status = 'ok' THEN
    CASE WHEN cl.claimed_time_us IS NOT NULL THEN cl.claimed_time_us / COALESCE(c.gpu_time_us_median, c.cpu_time_us_median)
         ELSE c.tflops / cl.claimed_tflops END
  END AS claim_ratio
FROM cases c JOIN runs r USING (run_id)
LEFT JOIN run_devices d ON d.run_id = c.run_id AND d.device = c.device AND d.shard_index IS c.shard_index
LEFT JOIN claims cl ON cl.claim_id = (SELECT min(x.claim_id) FROM claims x WHERE x.run_id = c.run_id AND x.plan_index = c.plan_index);

-- Every claim with its case (issue 37): the report's and compare's claims table. ratio as in results.
CREATE VIEW IF NOT EXISTS claim_results AS
SELECT
  cl.run_id, cl.claim_id, cl.claims_file, cl.name, cl.source_title, cl.source_where, cl.source_url,
  cl.source_repository, cl.source_path, cl.source_commit, cl.claimed_gpu, cl.claimed_software, cl.note,
  cl.variant, cl.case_label, cl.claimed_tflops, cl.claimed_time_us, cl.plan_index, cl.unmatched_reason,
  c.case_id, c.status, c.error_message, c.tflops AS measured_tflops,
  COALESCE(c.gpu_time_us_median, c.cpu_time_us_median) AS measured_time_us, c.median_ci_rel,
  CASE WHEN c.status = 'ok' THEN
    CASE WHEN cl.claimed_time_us IS NOT NULL THEN cl.claimed_time_us / COALESCE(c.gpu_time_us_median, c.cpu_time_us_median)
         ELSE c.tflops / cl.claimed_tflops END
  END AS claim_ratio,
  c.validity, c.validity_reasons, c.sm_clock_mhz_mean, c.power_cap_share, c.thermal_cap_share, c.throttled_samples,
  COALESCE(d.device_name, r.device_name) AS device_name, COALESCE(d.sm_clock_max_mhz, r.sm_clock_max_mhz) AS sm_clock_max_mhz,
  COALESCE(d.power_limit_w, r.power_limit_w) AS power_limit_w, COALESCE(d.torch_version, r.torch_version) AS torch_version,
  COALESCE(d.cuda_version, r.cuda_version) AS cuda_version, COALESCE(d.cudnn_version, r.cudnn_version) AS cudnn_version,
  COALESCE(d.driver_version, r.driver_version) AS driver_version
FROM claims cl JOIN runs r ON r.run_id = cl.run_id
LEFT JOIN cases c ON c.run_id = cl.run_id AND c.plan_index = cl.plan_index
LEFT JOIN run_devices d ON d.run_id = c.run_id AND d.device = c.device AND d.shard_index IS c.shard_index;

-- Which backend to pick (issue 37; docs/schema.md "choice"): per case group of a run (shape, dtype, mask,
-- score modifications, determinism, pass, device), the fastest variant of the ok, timed cases (sdpa_auto
-- left out: it is one of the others), whether its lead over the runner-up is real (the medians' 95%
-- confidence intervals apart: 'significant', else 'tie'; 'alone' when one variant ran, 'unknown' without
-- intervals), and PyTorch's own choice (sdpa_auto) against it: 'fastest' (it chose the fastest variant's
-- backend), 'slower' or 'faster' (intervals apart: faster when it ran a backend no variant timed pins),
-- 'tie' (the intervals overlap), 'unknown' (no intervals).
CREATE VIEW IF NOT EXISTS choice AS
WITH timed AS (
  SELECT c.case_id, c.run_id, c.variant, c.sdpa_backend, c.median_ci_rel, c.validity,
    COALESCE(c.gpu_time_us_median, c.cpu_time_us_median) AS t,
    c.batch || ' ' || c.heads || ' ' || c.kv_heads || ' ' || c.seq_len_q || ' ' || c.seq_len_kv || ' ' || c.head_dim || ' ' ||
      c.head_dim_v || ' ' || ifnull(c.seq_lens_q, '-') || ' ' || ifnull(c.seq_lens_kv, '-') || ' ' || c.page_size || ' ' ||
      c.dtype || ' ' || c.causal || ' ' || c.causal_bottom_right || ' ' || ifnull(c.window_left, '-') || ' ' ||
      ifnull(c.window_right, '-') || ' ' || ifnull(c.softcap, '-') || ' ' || c.alibi || ' ' || c.sinks || ' ' ||
      c.deterministic || ' ' || c.pass || ' ' || c.device AS group_key
  FROM cases c
  WHERE c.status = 'ok' AND COALESCE(c.gpu_time_us_median, c.cpu_time_us_median) IS NOT NULL
),
ranked AS (
  SELECT *, row_number() OVER (PARTITION BY run_id, group_key ORDER BY t, variant) AS rank_in_group,
    count(*) OVER (PARTITION BY run_id, group_key) AS variants_timed
  FROM timed WHERE variant <> 'sdpa_auto'
),
auto AS (SELECT * FROM timed WHERE variant = 'sdpa_auto')
SELECT
  f.run_id, f.group_key, f.case_id AS fastest_case_id, f.variant AS fastest_variant, f.sdpa_backend AS fastest_backend,
  f.t AS fastest_us, f.median_ci_rel AS fastest_ci_rel, f.validity AS fastest_validity, f.variants_timed,
  s.case_id AS runner_up_case_id, s.variant AS runner_up_variant, s.t AS runner_up_us, s.t / f.t - 1 AS lead,
  CASE WHEN s.variant IS NULL THEN 'alone'
       WHEN f.median_ci_rel IS NULL OR s.median_ci_rel IS NULL THEN 'unknown'
       WHEN f.t * (1 + f.median_ci_rel) < s.t * (1 - s.median_ci_rel) THEN 'significant'
       ELSE 'tie' END AS lead_verdict,
  a.case_id AS auto_case_id, a.sdpa_backend AS auto_backend, a.t AS auto_us, a.t / f.t - 1 AS auto_slower_by,
  CASE WHEN a.variant IS NULL THEN NULL
       WHEN a.sdpa_backend IS NOT NULL AND a.sdpa_backend = f.sdpa_backend THEN 'fastest'
       WHEN a.median_ci_rel IS NULL OR f.median_ci_rel IS NULL THEN 'unknown'
       WHEN a.t * (1 - a.median_ci_rel) > f.t * (1 + f.median_ci_rel) THEN 'slower'
       WHEN a.t * (1 + a.median_ci_rel) < f.t * (1 - f.median_ci_rel) THEN 'faster'
       ELSE 'tie' END AS auto_verdict
FROM ranked f
LEFT JOIN ranked s ON s.run_id = f.run_id AND s.group_key = f.group_key AND s.rank_in_group = 2
LEFT JOIN auto a ON a.run_id = f.run_id AND a.group_key = f.group_key
WHERE f.rank_in_group = 1;
