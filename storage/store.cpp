#include "storage/store.hpp"

#include <SQLiteCpp/SQLiteCpp.h>

#include <cmath>
#include <ctime>
#include <map>

#include "runner/common/errors.hpp"
#include "schema_sql.hpp"
#include "storage/migrations.hpp"
#include "git_sha.hpp"
#include "version.hpp"

namespace attnsweep::storage {
namespace {

// `Key`: a parameter's name (":x") or its 1-based position.
template <typename Key, typename T>
void bind_optional(SQLite::Statement& statement, Key name, const std::optional<T>& value) {
  if (value) {
    statement.bind(name, *value);
  } else {
    statement.bind(name);  // NULL
  }
}

template <typename Key>
void bind_text_or_null(SQLite::Statement& statement, Key name, const std::string& value) {
  if (value.empty()) {
    statement.bind(name);
  } else {
    statement.bind(name, value);
  }
}

void bind_finite(SQLite::Statement& statement, const char* name, double value) {
  if (std::isfinite(value)) {
    statement.bind(name, value);
  } else {
    statement.bind(name);
  }
}

void bind_statistics(SQLite::Statement& statement, const std::string& prefix,
                     const std::optional<SampleStatistics>& stats) {
  const std::vector<std::pair<std::string, double SampleStatistics::*>> fields = {
      {"_median", &SampleStatistics::median}, {"_p10", &SampleStatistics::p10},   {"_p90", &SampleStatistics::p90},
      {"_min", &SampleStatistics::min},       {"_mean", &SampleStatistics::mean}, {"_stdev", &SampleStatistics::stdev}};
  for (const auto& [suffix, member] : fields) {
    const std::string name = ":" + prefix + suffix;
    if (stats) {
      statement.bind(name, (*stats).*member);
    } else {
      statement.bind(name);
    }
  }
}

}  // namespace

std::string utc_now_iso8601() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buffer;
}

struct Store::Impl {
  SQLite::Database database;
  explicit Impl(const std::string& path)
      : database(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE, /*busy_timeout_ms=*/10000) {}
};

Store::Store(const std::string& path) : path_(path) {
  try {
    impl_ = std::make_unique<Impl>(path);
    auto& db = impl_->database;
    // Refuse what is not ours before writing anything, even the journal mode.
    // One snapshot for both reads: another process may be creating the schema right now.
    db.exec("BEGIN");
    const int version = db.execAndGet("PRAGMA user_version").getInt();
    const int tables = db.execAndGet("SELECT count(*) FROM sqlite_master WHERE type = 'table'").getInt();
    db.exec("COMMIT");
    if (version > kSchemaVersion) {
      throw BadInputError(path + ": database schema version " + std::to_string(version) +
                          " is newer than this attnsweep understands (" + std::to_string(kSchemaVersion) +
                          "); use a newer attnsweep or another --db");
    }
    if (version == 0 && tables > 0) {
      throw BadInputError(path + ": is a SQLite database but not an attnsweep one (user_version 0 with " +
                          std::to_string(tables) + " tables); choose another --db");
    }
    db.exec("PRAGMA journal_mode = WAL");
    if (version < kSchemaVersion) {
      // One writer at a time creates or migrates: others wait on the lock, then
      // find the current version and do nothing.
      db.exec("PRAGMA foreign_keys = OFF");
      db.exec("BEGIN IMMEDIATE");
      try {
        const int locked_version = db.execAndGet("PRAGMA user_version").getInt();
        if (locked_version == 0) {
          db.exec(kSchemaSql);
        } else if (locked_version < kSchemaVersion) {
          migrate(db, locked_version);
        }
        db.exec("PRAGMA user_version = " + std::to_string(kSchemaVersion));
        db.exec("COMMIT");
      } catch (...) {
        db.exec("ROLLBACK");
        throw;
      }
    }
    db.exec("PRAGMA foreign_keys = ON");
  } catch (const SQLite::Exception& error) {
    throw BadInputError(path + ": cannot use as a results database: " + error.what());
  }
}

Store::~Store() = default;

std::int64_t Store::begin_run(const RunRecord& run) {
  auto& db = impl_->database;
  SQLite::Statement insert(db, R"SQL(
    INSERT INTO runs (name, description, config_path, config_yaml, config_sha256, status, started_at,
      device, device_name, sm_count, device_memory_bytes, l2_cache_bytes, torch_version, cuda_version,
      cudnn_version, driver_version, hostname, attnsweep_version, git_sha, seed, timing_protocol,
      flop_convention, warmup, profiled_forwards, min_samples, max_samples, target_rel_stdev,
      max_case_seconds, planned_cases, isolate, case_timeout_s, l2_flush, cuda_graph, hide_launch_latency, min_gpu_seconds,
      throttle_fraction, sm_clock_max_mhz, ceiling_bf16_tflops, ceiling_copy_gbps, case_order)
    VALUES (:name, :description, :config_path, :config_yaml, :config_sha256, 'running', :started_at,
      :device, :device_name, :sm_count, :device_memory_bytes, :l2_cache_bytes, :torch_version, :cuda_version,
      :cudnn_version, :driver_version, :hostname, :attnsweep_version, :git_sha, :seed, :timing_protocol,
      :flop_convention, :warmup, :profiled_forwards, :min_samples, :max_samples, :target_rel_stdev,
      :max_case_seconds, :planned_cases, :isolate, :case_timeout_s, :l2_flush, :cuda_graph, :hide_launch_latency, :min_gpu_seconds,
      :throttle_fraction, :sm_clock_max_mhz, :ceiling_bf16_tflops, :ceiling_copy_gbps, :case_order))SQL");
  const EnvironmentInfo& env = run.environment;
  insert.bind(":name", run.name);
  bind_text_or_null(insert, ":description", run.description);
  bind_text_or_null(insert, ":config_path", run.config_path);
  insert.bind(":config_yaml", run.config_yaml);
  insert.bind(":config_sha256", run.config_sha256);
  insert.bind(":started_at", utc_now_iso8601());
  insert.bind(":device", env.device);
  bind_text_or_null(insert, ":device_name", env.device_name);
  bind_optional(insert, ":sm_count", env.sm_count > 0 ? std::optional<int>(env.sm_count) : std::nullopt);
  bind_optional(insert, ":device_memory_bytes",
                env.device_memory_bytes > 0 ? std::optional<std::int64_t>(env.device_memory_bytes) : std::nullopt);
  bind_optional(insert, ":l2_cache_bytes",
                env.l2_cache_bytes > 0 ? std::optional<std::int64_t>(env.l2_cache_bytes) : std::nullopt);
  bind_text_or_null(insert, ":torch_version", env.torch_version);
  bind_text_or_null(insert, ":cuda_version", env.cuda_version);
  bind_text_or_null(insert, ":cudnn_version", env.cudnn_version);
  bind_text_or_null(insert, ":driver_version", env.driver_version);
  bind_text_or_null(insert, ":hostname", env.hostname);
  insert.bind(":attnsweep_version", std::string(attnsweep::kVersion));
  insert.bind(":git_sha", std::string(attnsweep::kGitSha));
  insert.bind(":seed", static_cast<std::int64_t>(run.seed));
  insert.bind(":timing_protocol", run.timing_protocol);
  insert.bind(":flop_convention", run.flop_convention);
  insert.bind(":warmup", run.measure.warmup);
  insert.bind(":profiled_forwards", run.measure.profiled_forwards);
  insert.bind(":min_samples", run.measure.min_samples);
  insert.bind(":max_samples", run.measure.max_samples);
  insert.bind(":target_rel_stdev", run.measure.target_rel_stdev);
  insert.bind(":max_case_seconds", run.measure.max_case_seconds);
  insert.bind(":planned_cases", run.planned_cases);
  insert.bind(":isolate", run.isolate ? 1 : 0);
  bind_optional(insert, ":case_timeout_s",
                run.isolate ? std::optional<double>(run.measure.case_timeout_s) : std::nullopt);
  const bool gpu = env.device.rfind("cuda", 0) == 0;
  bind_optional(insert, ":l2_flush", gpu ? std::optional<int>(run.measure.l2_flush ? 1 : 0) : std::nullopt);
  bind_optional(insert, ":cuda_graph", gpu ? std::optional<int>(run.measure.cuda_graph ? 1 : 0) : std::nullopt);
  bind_optional(insert, ":hide_launch_latency",
                gpu ? std::optional<int>(run.measure.hide_launch_latency ? 1 : 0) : std::nullopt);
  insert.bind(":min_gpu_seconds", run.measure.min_gpu_seconds);
  bind_optional(insert, ":throttle_fraction", gpu ? std::optional<double>(run.measure.throttle_fraction) : std::nullopt);
  bind_optional(insert, ":sm_clock_max_mhz",
                env.sm_clock_max_mhz > 0 ? std::optional<int>(env.sm_clock_max_mhz) : std::nullopt);
  bind_optional(insert, ":ceiling_bf16_tflops", run.ceiling_bf16_tflops);
  bind_optional(insert, ":ceiling_copy_gbps", run.ceiling_copy_gbps);
  insert.bind(":case_order", run.measure.case_order);
  insert.exec();
  return db.getLastInsertRowid();
}

std::int64_t Store::add_case(std::int64_t run_id, const Case& c, const CaseResult& result) {
  auto& db = impl_->database;
  SQLite::Transaction transaction(db);
  SQLite::Statement insert(db, R"SQL(
    INSERT INTO cases (run_id, plan_index, variant, batch, heads, kv_heads, seq_len_q, seq_len_kv, head_dim,
      dtype, causal, device, status, error_message, warnings, sdpa_backend, timer, stop_reason,
      kernels_per_forward, memcpy_per_forward, memset_per_forward, cpu_ops_per_forward, counts_consistent,
      profile_attempts, profiled_forwards, kernel_time_us_per_forward,
      gpu_time_us_median, gpu_time_us_p10, gpu_time_us_p90, gpu_time_us_min, gpu_time_us_mean, gpu_time_us_stdev,
      cpu_time_us_median, cpu_time_us_p10, cpu_time_us_p90, cpu_time_us_min, cpu_time_us_mean, cpu_time_us_stdev,
      samples, cpu_dispatch_us_median, rel_error, peak_mem_bytes, flops, min_bytes, tflops, bandwidth_gbps,
      trace_path, wall_seconds, finished_at, graph_time_us_median, graph_time_us_p10, graph_time_us_p90,
      graph_time_us_min, graph_samples, graph_error, sm_clock_mhz_mean, throttled_samples, launch_latency_hidden,
      median_ci_rel, setup_seconds, accuracy_seconds, warmup_seconds, timing_seconds, graph_seconds, profile_seconds)
    VALUES (:run_id, :plan_index, :variant, :batch, :heads, :kv_heads, :seq_len_q, :seq_len_kv, :head_dim,
      :dtype, :causal, :device, :status, :error_message, :warnings, :sdpa_backend, :timer, :stop_reason,
      :kernels_per_forward, :memcpy_per_forward, :memset_per_forward, :cpu_ops_per_forward, :counts_consistent,
      :profile_attempts, :profiled_forwards, :kernel_time_us_per_forward,
      :gpu_time_us_median, :gpu_time_us_p10, :gpu_time_us_p90, :gpu_time_us_min, :gpu_time_us_mean, :gpu_time_us_stdev,
      :cpu_time_us_median, :cpu_time_us_p10, :cpu_time_us_p90, :cpu_time_us_min, :cpu_time_us_mean, :cpu_time_us_stdev,
      :samples, :cpu_dispatch_us_median, :rel_error, :peak_mem_bytes, :flops, :min_bytes, :tflops, :bandwidth_gbps,
      :trace_path, :wall_seconds, :finished_at, :graph_time_us_median, :graph_time_us_p10, :graph_time_us_p90,
      :graph_time_us_min, :graph_samples, :graph_error, :sm_clock_mhz_mean, :throttled_samples,
      :launch_latency_hidden, :median_ci_rel, :setup_seconds, :accuracy_seconds, :warmup_seconds, :timing_seconds,
      :graph_seconds, :profile_seconds))SQL");
  insert.bind(":run_id", run_id);
  insert.bind(":plan_index", c.plan_index);
  insert.bind(":variant", c.variant);
  insert.bind(":batch", c.shape.batch);
  insert.bind(":heads", c.shape.heads);
  insert.bind(":kv_heads", c.shape.kv_heads);
  insert.bind(":seq_len_q", c.shape.seq_len_q);
  insert.bind(":seq_len_kv", c.shape.seq_len_kv);
  insert.bind(":head_dim", c.shape.head_dim);
  insert.bind(":dtype", c.dtype);
  insert.bind(":causal", c.causal ? 1 : 0);
  insert.bind(":device", result.device);
  insert.bind(":status", result.status);
  bind_text_or_null(insert, ":error_message", result.error_message);
  std::string warnings;
  for (const auto& warning : result.warnings) warnings += (warnings.empty() ? "" : "; ") + warning;
  bind_text_or_null(insert, ":warnings", warnings);
  bind_text_or_null(insert, ":sdpa_backend", result.sdpa_backend);
  bind_text_or_null(insert, ":timer", result.timer);
  bind_text_or_null(insert, ":stop_reason", result.stop_reason);
  const bool gpu = result.device.rfind("cuda", 0) == 0;
  const auto& profile = result.profile;
  auto per_forward = [&](const std::vector<int>* counts) -> std::optional<int> {
    if (!profile || !gpu || counts->empty()) return std::nullopt;
    return counts->front();  // equal in every forward when counts_consistent
  };
  bind_optional(insert, ":kernels_per_forward", per_forward(profile ? &profile->kernels_each_forward : nullptr));
  bind_optional(insert, ":memcpy_per_forward", per_forward(profile ? &profile->memcpy_each_forward : nullptr));
  bind_optional(insert, ":memset_per_forward", per_forward(profile ? &profile->memset_each_forward : nullptr));
  bind_optional(insert, ":cpu_ops_per_forward", profile ? std::optional<int>(profile->cpu_ops_per_forward) : std::nullopt);
  bind_optional(insert, ":counts_consistent", profile ? std::optional<int>(profile->counts_consistent ? 1 : 0) : std::nullopt);
  bind_optional(insert, ":profile_attempts", profile ? std::optional<int>(profile->attempts) : std::nullopt);
  bind_optional(insert, ":profiled_forwards", profile ? std::optional<int>(profile->profiled_forwards) : std::nullopt);
  bind_optional(insert, ":kernel_time_us_per_forward",
                profile && gpu ? std::optional<double>(profile->kernel_time_us_per_forward) : std::nullopt);
  bind_statistics(insert, "gpu_time_us", result.gpu_time_us);
  bind_statistics(insert, "cpu_time_us", result.cpu_time_us);
  int eager_samples = 0;
  for (const auto& sample : result.samples) eager_samples += sample.mode == "eager" ? 1 : 0;
  bind_optional(insert, ":samples", eager_samples == 0 ? std::nullopt : std::optional<int>(eager_samples));
  bind_optional(insert, ":cpu_dispatch_us_median", result.cpu_dispatch_us_median);
  bind_optional(insert, ":rel_error", result.rel_error);
  bind_optional(insert, ":peak_mem_bytes", result.peak_mem_bytes);
  insert.bind(":flops", result.flops);
  insert.bind(":min_bytes", result.min_bytes);
  bind_optional(insert, ":tflops", result.tflops);
  bind_optional(insert, ":bandwidth_gbps", result.bandwidth_gbps);
  bind_text_or_null(insert, ":trace_path", result.trace_path);
  bind_finite(insert, ":wall_seconds", result.wall_seconds);
  insert.bind(":finished_at", utc_now_iso8601());
  const auto& graph = result.graph_time_us;
  bind_optional(insert, ":graph_time_us_median", graph ? std::optional<double>(graph->median) : std::nullopt);
  bind_optional(insert, ":graph_time_us_p10", graph ? std::optional<double>(graph->p10) : std::nullopt);
  bind_optional(insert, ":graph_time_us_p90", graph ? std::optional<double>(graph->p90) : std::nullopt);
  bind_optional(insert, ":graph_time_us_min", graph ? std::optional<double>(graph->min) : std::nullopt);
  bind_optional(insert, ":graph_samples", graph ? std::optional<int>(graph->count) : std::nullopt);
  bind_text_or_null(insert, ":graph_error", result.graph_error);
  bind_optional(insert, ":sm_clock_mhz_mean", result.sm_clock_mhz_mean);
  bind_optional(insert, ":throttled_samples",
                gpu && !result.samples.empty() ? std::optional<int>(result.throttled_samples) : std::nullopt);
  bind_optional(insert, ":launch_latency_hidden",
                result.launch_latency_hidden ? std::optional<int>(*result.launch_latency_hidden ? 1 : 0) : std::nullopt);
  const auto& primary = result.gpu_time_us ? result.gpu_time_us : result.cpu_time_us;
  bind_optional(insert, ":median_ci_rel", primary ? primary->median_ci_rel : std::nullopt);
  const PhaseSeconds& phases = result.phases;
  bind_finite(insert, ":setup_seconds", phases.setup);
  bind_finite(insert, ":accuracy_seconds", phases.accuracy);
  bind_finite(insert, ":warmup_seconds", phases.warmup);
  bind_finite(insert, ":timing_seconds", phases.timing);
  bind_finite(insert, ":graph_seconds", phases.graph);
  bind_finite(insert, ":profile_seconds", phases.profile);
  insert.exec();
  const std::int64_t case_id = db.getLastInsertRowid();

  if (profile) {
    SQLite::Statement kernel(db, "INSERT INTO kernels VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    for (const auto& k : profile->kernels) {
      kernel.bind(1, static_cast<int64_t>(case_id));
      kernel.bind(2, k.name);
      kernel.bind(3, k.kind);
      kernel.bind(4, k.launches_per_forward);
      kernel.bind(5, k.total_us);
      kernel.bind(6, k.mean_us);
      kernel.bind(7, k.min_us);
      kernel.bind(8, k.max_us);
      kernel.bind(9, static_cast<std::int64_t>(k.stream));
      bind_text_or_null(kernel, 10, k.grid);
      bind_text_or_null(kernel, 11, k.block);
      bind_optional(kernel, 12, k.registers_per_thread);
      bind_optional(kernel, 13, k.shared_memory_bytes);
      bind_optional(kernel, 14, k.blocks_per_sm);
      bind_optional(kernel, 15, k.warps_per_sm);
      bind_optional(kernel, 16, k.est_occupancy_pct);
      kernel.exec();
      kernel.reset();
    }
    SQLite::Statement op(db, "INSERT INTO ops VALUES (?, ?, ?, ?, ?, ?)");
    for (const auto& o : profile->ops) {
      op.bind(1, case_id);
      op.bind(2, o.name);
      op.bind(3, o.kind);
      op.bind(4, o.calls_per_forward);
      op.bind(5, o.self_cpu_us);
      op.bind(6, o.total_cpu_us);
      op.exec();
      op.reset();
    }
  }
  SQLite::Statement sample(db, "INSERT INTO samples (case_id, sample_index, gpu_time_us, cpu_time_us, "
                               "host_dispatch_us, mode, sm_clock_mhz, throttled, blocked, block_timed_out) "
                               "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  std::map<std::string, std::int64_t> next_index;  // numbered per mode
  for (const auto& s : result.samples) {
    sample.bind(1, case_id);
    sample.bind(2, next_index[s.mode]++);
    bind_optional(sample, 3, s.gpu_time_us);
    bind_optional(sample, 4, s.cpu_time_us);
    bind_optional(sample, 5, s.host_dispatch_us);
    sample.bind(6, s.mode);
    bind_optional(sample, 7, s.sm_clock_mhz);
    sample.bind(8, s.throttled ? 1 : 0);
    sample.bind(9, s.blocked ? 1 : 0);
    sample.bind(10, s.block_timed_out ? 1 : 0);
    sample.exec();
    sample.reset();
  }
  transaction.commit();
  return case_id;
}

void Store::finish_run(std::int64_t run_id, const std::string& status) {
  SQLite::Statement update(impl_->database, "UPDATE runs SET status = ?, finished_at = ? WHERE run_id = ?");
  update.bind(1, status);
  update.bind(2, utc_now_iso8601());
  update.bind(3, run_id);
  update.exec();
}

std::optional<StoredRun> Store::find_run(std::optional<std::int64_t> run_id) {
  SQLite::Statement query(impl_->database,
                          run_id ? "SELECT run_id, status, config_sha256, device, planned_cases FROM runs WHERE run_id = ?"
                                 : "SELECT run_id, status, config_sha256, device, planned_cases FROM runs "
                                   "ORDER BY run_id DESC LIMIT 1");
  if (run_id) query.bind(1, *run_id);
  if (!query.executeStep()) return std::nullopt;
  return StoredRun{query.getColumn(0).getInt64(), query.getColumn(1).getString(), query.getColumn(2).getString(),
                   query.getColumn(3).getString(), query.getColumn(4).getInt()};
}

std::set<int> Store::stored_plan_indexes(std::int64_t run_id) {
  SQLite::Statement query(impl_->database, "SELECT plan_index FROM cases WHERE run_id = ?");
  query.bind(1, run_id);
  std::set<int> indexes;
  while (query.executeStep()) indexes.insert(query.getColumn(0).getInt());
  return indexes;
}

void Store::reopen_run(std::int64_t run_id) {
  SQLite::Statement update(impl_->database, "UPDATE runs SET status = 'running', finished_at = NULL WHERE run_id = ?");
  update.bind(1, run_id);
  update.exec();
}

std::vector<std::pair<Case, CaseResult>> Store::load_cases(std::int64_t run_id) {
  SQLite::Statement query(impl_->database, R"SQL(
    SELECT plan_index, variant, batch, heads, kv_heads, seq_len_q, seq_len_kv, head_dim, dtype, causal,
           device, status, error_message, sdpa_backend, kernels_per_forward, memcpy_per_forward,
           memset_per_forward, counts_consistent, gpu_time_us_median, cpu_time_us_median, tflops, rel_error,
           samples, stop_reason
    FROM cases WHERE run_id = ? ORDER BY plan_index)SQL");
  query.bind(1, run_id);
  std::vector<std::pair<Case, CaseResult>> rows;
  auto optional_double = [&](int column) -> std::optional<double> {
    return query.getColumn(column).isNull() ? std::nullopt : std::optional<double>(query.getColumn(column).getDouble());
  };
  while (query.executeStep()) {
    Case c;
    c.plan_index = query.getColumn(0).getInt();
    c.variant = query.getColumn(1).getString();
    c.shape = Shape{query.getColumn(2).getInt64(), query.getColumn(3).getInt64(), query.getColumn(4).getInt64(),
                    query.getColumn(5).getInt64(), query.getColumn(6).getInt64(), query.getColumn(7).getInt64()};
    c.dtype = query.getColumn(8).getString();
    c.causal = query.getColumn(9).getInt() != 0;
    CaseResult r;
    r.device = query.getColumn(10).getString();
    r.status = query.getColumn(11).getString();
    r.error_message = query.getColumn(12).getString();
    r.sdpa_backend = query.getColumn(13).getString();
    if (!query.getColumn(14).isNull()) {
      ProfileSummary profile;
      profile.kernels_each_forward = {query.getColumn(14).getInt()};
      profile.memcpy_each_forward = {query.getColumn(15).getInt()};
      profile.memset_each_forward = {query.getColumn(16).getInt()};
      profile.counts_consistent = query.getColumn(17).getInt() != 0;
      r.profile = profile;
    }
    if (auto median = optional_double(18)) {
      r.gpu_time_us = SampleStatistics{};
      r.gpu_time_us->median = *median;
    }
    if (auto median = optional_double(19)) {
      r.cpu_time_us = SampleStatistics{};
      r.cpu_time_us->median = *median;
    }
    r.tflops = optional_double(20);
    r.rel_error = optional_double(21);
    r.samples.resize(query.getColumn(22).isNull() ? 0 : query.getColumn(22).getInt());
    r.stop_reason = query.getColumn(23).getString();
    rows.emplace_back(c, r);
  }
  return rows;
}

}  // namespace attnsweep::storage
