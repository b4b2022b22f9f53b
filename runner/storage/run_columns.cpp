#include "runner/storage/run_columns.hpp"

#include <nlohmann/json.hpp>

#include <utility>

#include "git_sha.hpp"
#include "runner/storage/trace_location.hpp"
#include "version.hpp"

namespace attnsweep::storage {
namespace {

using fields::Field;
using fields::OneOf;
using fields::Table;
using fields::Where;
using fields::kAtLeastOne;
using fields::kNotNegative;
using fields::member;
using fields::text_or_null;
using R = RunRow;

// The roles of the facts compare reports (fact_role.hpp).
const FactRole kFact{};
const FactRole kGpuFact{true, MovesTimes::no};
const FactRole kGpuMovesTimes{true, MovesTimes::yes};
const FactRole kUnlikeTimes{false, MovesTimes::unlike};
const FactRole kGpuUnlikeTimes{true, MovesTimes::unlike};

template <typename T>
std::optional<T> positive_or_empty(T value) {  // a size or clock where 0 means unknown
  return value > 0 ? std::optional<T>(value) : std::nullopt;
}

}  // namespace

std::string env_vars_json(const EnvironmentInfo& environment) {
  // A value that is not UTF-8 is stored with U+FFFD in its place rather than failing the run.
  return nlohmann::json(environment.env_vars).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

const Table<RunRow>& run_columns() {
  static const Table<R> table{
      "runs",
      {},
      {Field<R>{"run_id", {}, [](const SQLite::Column& v, const Where& w, R& r) { fields::from_column(v, w, r.run_id); }},
       member<R>("name", &R::name),
       text_or_null<R>("description", &R::description),
       text_or_null<R>("config_path", &R::config_path),
       member<R>("config_yaml", &R::config_yaml),
       member<R>("status", &R::status),
       member<R>("started_at", &R::started_at),
       text_or_null<R>("finished_at", &R::finished_at),
       // The facts compare reports where two runs differ (run_facts.hpp), in its order: the
       // machine and software, how the run measured, its protocol settings.
       member<R>("device", &R::device).as_fact(kFact),
       text_or_null<R>("device_name", &R::device_name).as_fact(kFact),
       text_or_null<R>("driver_version", &R::driver_version).as_fact(kFact),
       text_or_null<R>("cuda_version", &R::cuda_version).as_fact(kFact),
       text_or_null<R>("cudnn_version", &R::cudnn_version).as_fact(kFact),
       text_or_null<R>("torch_version", &R::torch_version).as_fact(kFact),
       member<R>("attnsweep_version", &R::attnsweep_version).as_fact(kFact),
       member<R>("git_sha", &R::git_sha).as_fact(kFact),
       text_or_null<R>("container_image", &R::container_image).as_fact(kFact),
       text_or_null<R>("op_libraries", &R::op_libraries).as_fact(kFact),
       text_or_null<R>("hostname", &R::hostname).as_fact(kFact),
       member<R>("timing_protocol", &R::timing_protocol).as_fact(kUnlikeTimes),
       member<R>("measure_regime", &R::measure_regime, OneOf{measure_regime_names()}).as_fact(kGpuUnlikeTimes),
       member<R>("flop_convention", &R::flop_convention).as_fact(kFact),
       member<R>("config_sha256", &R::config_sha256).as_fact(kFact),
       member<R>("power_limit_w", &R::power_limit_w, kNotNegative).as_fact(kGpuMovesTimes),
       member<R>("sm_clock_max_mhz", &R::sm_clock_max_mhz, kNotNegative).as_fact(kGpuMovesTimes),
       member<R>("sm_clock_start_mhz", &R::sm_clock_start_mhz, kNotNegative).as_fact(kGpuFact),
       member<R>("mem_clock_start_mhz", &R::mem_clock_start_mhz, kNotNegative).as_fact(kGpuFact),
       member<R>("temperature_start_c", &R::temperature_start_c).as_fact(kGpuFact),
       member<R>("seed", &R::seed).as_fact(kFact),
       member<R>("isolate", &R::isolate).as_fact(kFact),
       member<R>("case_order", &R::case_order).as_fact(kFact),
       text_or_null<R>("gpus", &R::gpus).as_fact(kFact),
       member<R>("l2_flush", &R::l2_flush).as_fact(kFact),
       member<R>("cuda_graph", &R::cuda_graph).as_fact(kFact),
       member<R>("hide_launch_latency", &R::hide_launch_latency).as_fact(kFact),
       member<R>("throttle_fraction", &R::throttle_fraction, kNotNegative).as_fact(kFact),
       member<R>("min_gpu_seconds", &R::min_gpu_seconds, kNotNegative).as_fact(kFact),
       member<R>("warmup", &R::warmup, kNotNegative).as_fact(kFact),
       member<R>("profiled_forwards", &R::profiled_forwards, kNotNegative).as_fact(kFact),
       member<R>("min_samples", &R::min_samples, kNotNegative).as_fact(kFact),
       member<R>("max_samples", &R::max_samples, kNotNegative).as_fact(kFact),
       member<R>("target_rel_stdev", &R::target_rel_stdev, kNotNegative).as_fact(kFact),
       member<R>("max_case_seconds", &R::max_case_seconds, kNotNegative).as_fact(kFact),
       member<R>("burst_cooldown_max_ms", &R::burst_cooldown_max_ms, kNotNegative).as_fact(kGpuFact),
       member<R>("clock_event_reasons_start", &R::clock_event_reasons_start).as_fact(kGpuFact),
       // The rest: sizes, ceilings, the process that holds the run, scale-out, the environment at the start.
       member<R>("sm_count", &R::sm_count, kNotNegative),
       member<R>("device_memory_bytes", &R::device_memory_bytes, kNotNegative),
       member<R>("l2_cache_bytes", &R::l2_cache_bytes, kNotNegative),
       member<R>("planned_cases", &R::planned_cases, kNotNegative),
       member<R>("case_timeout_s", &R::case_timeout_s, kNotNegative),
       member<R>("graph_target_median_ci", &R::graph_target_median_ci, kNotNegative),
       member<R>("ceiling_bf16_tflops", &R::ceiling_bf16_tflops, kNotNegative),
       member<R>("ceiling_copy_gbps", &R::ceiling_copy_gbps, kNotNegative),
       member<R>("owner_pid", &R::owner_pid, kAtLeastOne),
       text_or_null<R>("owner_host", &R::owner_host),
       text_or_null<R>("claimed_at", &R::claimed_at),
       text_or_null<R>("heartbeat_at", &R::heartbeat_at),
       member<R>("run_uuid", &R::run_uuid),
       text_or_null<R>("sweep_id", &R::sweep_id),
       member<R>("shard_index", &R::shard_index, kNotNegative),
       member<R>("shard_count", &R::shard_count, kAtLeastOne),
       text_or_null<R>("shard_source", &R::shard_source),
       text_or_null<R>("shard_split", &R::shard_split),
       member<R>("sweep_cases", &R::sweep_cases, kNotNegative),
       member<R>("env_vars", &R::env_vars),
       member<R>("other_processes_start", &R::other_processes_start, kNotNegative),
       member<R>("gpu_utilization_start_pct", &R::gpu_utilization_start_pct, kNotNegative),
       member<R>("trace_path_base", &R::trace_path_base, OneOf{{"database", "working_directory"}})}};
  return table;
}

bool variable_moves_times(const std::string& name) {
  // The allocator, TF32 and launch blocking: a change of any of them moves times.
  for (const char* exact : {"PYTORCH_NO_CUDA_MEMORY_CACHING", "PYTORCH_CUDA_ALLOC_CONF", "CUDA_LAUNCH_BLOCKING",
                            "NVIDIA_TF32_OVERRIDE"}) {
    if (name == exact) return true;
  }
  return name.rfind("TORCH_ALLOW_TF32", 0) == 0;
}

RunRow run_record(const RunRecord& run, const std::string& started_at, const Claim& owner, const std::string& run_uuid) {
  const EnvironmentInfo& e = run.environment;
  const MeasureSettings& m = run.measure;
  const bool on_gpu = e.device.is_cuda();
  RunRow row;
  row.name = run.name;
  row.description = run.description;
  row.config_path = run.config_path;
  row.config_yaml = run.config_yaml;
  row.config_sha256 = run.config_sha256;
  row.status = RunStatus::running;
  row.started_at = started_at;
  row.device = e.device;
  row.device_name = e.device_name;
  row.sm_count = positive_or_empty(e.sm_count);
  row.device_memory_bytes = positive_or_empty(e.device_memory_bytes);
  row.l2_cache_bytes = positive_or_empty(e.l2_cache_bytes);
  row.torch_version = e.torch_version;
  row.cuda_version = e.cuda_version;
  row.cudnn_version = e.cudnn_version;
  row.driver_version = e.driver_version;
  row.hostname = e.hostname;
  row.attnsweep_version = kVersion;
  row.git_sha = kGitSha;
  row.seed = run.seed;
  row.timing_protocol = run.timing_protocol;
  row.flop_convention = run.flop_convention;
  row.warmup = m.warmup;
  row.profiled_forwards = m.profiled_forwards;
  row.min_samples = m.min_samples;
  row.max_samples = m.max_samples;
  row.target_rel_stdev = m.target_rel_stdev;
  row.max_case_seconds = m.max_case_seconds;
  row.planned_cases = run.planned_cases;
  row.isolate = run.isolate;
  if (run.isolate) row.case_timeout_s = m.case_timeout_s;
  if (on_gpu) {  // settings of the GPU's timing
    row.l2_flush = m.l2_flush;
    row.cuda_graph = m.cuda_graph;
    row.hide_launch_latency = m.hide_launch_latency;
    row.throttle_fraction = m.throttle_fraction;
    if (m.cuda_graph) row.graph_target_median_ci = m.graph_target_median_ci;
  }
  row.min_gpu_seconds = m.min_gpu_seconds;
  row.sm_clock_max_mhz = positive_or_empty(e.sm_clock_max_mhz);
  row.ceiling_bf16_tflops = run.ceiling_bf16_tflops;
  row.ceiling_copy_gbps = run.ceiling_copy_gbps;
  row.case_order = m.case_order;
  row.owner_pid = owner.pid;
  row.owner_host = owner.host;
  row.claimed_at = started_at;
  row.heartbeat_at = started_at;
  row.run_uuid = run_uuid;
  row.sweep_id = run.sweep_id;
  row.shard_index = run.shard_index;
  row.shard_count = run.shard_count;
  row.shard_source = run.shard_source;
  row.shard_split = run.shard_split;
  row.sweep_cases = positive_or_empty(run.sweep_cases);
  row.gpus = run.gpus;
  row.container_image = e.container_image;
  row.op_libraries = run.op_libraries;
  // No CPU sample waits for a cool-down: a CPU run is sustained whatever the config asks,
  // so that CPU runs compare alike (runs.measure_regime is NOT NULL).
  row.measure_regime = to_string(on_gpu ? m.regime : MeasureRegime::sustained);
  if (on_gpu && m.regime == MeasureRegime::burst) row.burst_cooldown_max_ms = m.burst_cooldown_max_ms;
  row.power_limit_w = positive_or_empty(e.power_limit_w);
  row.sm_clock_start_mhz = positive_or_empty(e.sm_clock_start_mhz);
  row.mem_clock_start_mhz = positive_or_empty(e.mem_clock_start_mhz);
  row.temperature_start_c = positive_or_empty(e.temperature_start_c);
  if (e.sm_clock_start_mhz > 0) row.clock_event_reasons_start = e.clock_event_reasons_start;
  row.env_vars = env_vars_json(e);
  if (e.other_processes_start >= 0) row.other_processes_start = e.other_processes_start;
  if (e.gpu_utilization_start_pct >= 0) row.gpu_utilization_start_pct = e.gpu_utilization_start_pct;
  row.trace_path_base = kTraceBaseDatabase;
  return row;
}

}  // namespace attnsweep::storage
