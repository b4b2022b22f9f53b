#include "storage/store.hpp"

#include <SQLiteCpp/SQLiteCpp.h>

#include <ctime>
#include <map>
#include <vector>

#include "runner/common/errors.hpp"
#include "schema_sql.hpp"
#include "storage/fields.hpp"
#include "storage/migrations.hpp"
#include "git_sha.hpp"
#include "version.hpp"

namespace attnsweep::storage {
namespace {

using fields::Field;
using fields::Fields;
using fields::Table;
using fields::Value;
using fields::null_if_empty;
using fields::null_unless_finite;
using fields::null_unless_positive;
using fields::only_if;
using fields::to_value;

// ---- runs -------------------------------------------------------------------

// What one runs row is written from.
struct NewRun {
  const RunRecord& record;
  std::string started_at;

  const EnvironmentInfo& environment() const { return record.environment; }
  const MeasureSettings& measure() const { return record.measure; }
  bool on_gpu() const { return record.environment.device.is_cuda(); }
};

const Table<NewRun>& runs_table() {
  using R = NewRun;
  static const Table<R> table{
      "runs",
      {},
      {
          {"name", [](const R& r) { return to_value(r.record.name); }},
          {"description", [](const R& r) { return null_if_empty(r.record.description); }},
          {"config_path", [](const R& r) { return null_if_empty(r.record.config_path); }},
          {"config_yaml", [](const R& r) { return to_value(r.record.config_yaml); }},
          {"config_sha256", [](const R& r) { return to_value(r.record.config_sha256); }},
          {"status", [](const R&) { return to_value(RunStatus::running); }},
          {"started_at", [](const R& r) { return to_value(r.started_at); }},
          {"device", [](const R& r) { return to_value(r.environment().device); }},
          {"device_name", [](const R& r) { return null_if_empty(r.environment().device_name); }},
          {"sm_count", [](const R& r) { return null_unless_positive(r.environment().sm_count); }},
          {"device_memory_bytes", [](const R& r) { return null_unless_positive(r.environment().device_memory_bytes); }},
          {"l2_cache_bytes", [](const R& r) { return null_unless_positive(r.environment().l2_cache_bytes); }},
          {"torch_version", [](const R& r) { return null_if_empty(r.environment().torch_version); }},
          {"cuda_version", [](const R& r) { return null_if_empty(r.environment().cuda_version); }},
          {"cudnn_version", [](const R& r) { return null_if_empty(r.environment().cudnn_version); }},
          {"driver_version", [](const R& r) { return null_if_empty(r.environment().driver_version); }},
          {"hostname", [](const R& r) { return null_if_empty(r.environment().hostname); }},
          {"attnsweep_version", [](const R&) { return to_value(attnsweep::kVersion); }},
          {"git_sha", [](const R&) { return to_value(attnsweep::kGitSha); }},
          {"seed", [](const R& r) { return to_value(r.record.seed); }},
          {"timing_protocol", [](const R& r) { return to_value(r.record.timing_protocol); }},
          {"flop_convention", [](const R& r) { return to_value(r.record.flop_convention); }},
          {"warmup", [](const R& r) { return to_value(r.measure().warmup); }},
          {"profiled_forwards", [](const R& r) { return to_value(r.measure().profiled_forwards); }},
          {"min_samples", [](const R& r) { return to_value(r.measure().min_samples); }},
          {"max_samples", [](const R& r) { return to_value(r.measure().max_samples); }},
          {"target_rel_stdev", [](const R& r) { return to_value(r.measure().target_rel_stdev); }},
          {"max_case_seconds", [](const R& r) { return to_value(r.measure().max_case_seconds); }},
          {"planned_cases", [](const R& r) { return to_value(r.record.planned_cases); }},
          {"isolate", [](const R& r) { return to_value(r.record.isolate); }},
          {"case_timeout_s", [](const R& r) { return only_if(r.record.isolate, r.measure().case_timeout_s); }},
          {"l2_flush", [](const R& r) { return only_if(r.on_gpu(), r.measure().l2_flush); }},
          {"cuda_graph", [](const R& r) { return only_if(r.on_gpu(), r.measure().cuda_graph); }},
          {"hide_launch_latency", [](const R& r) { return only_if(r.on_gpu(), r.measure().hide_launch_latency); }},
          {"min_gpu_seconds", [](const R& r) { return to_value(r.measure().min_gpu_seconds); }},
          {"throttle_fraction", [](const R& r) { return only_if(r.on_gpu(), r.measure().throttle_fraction); }},
          {"sm_clock_max_mhz", [](const R& r) { return null_unless_positive(r.environment().sm_clock_max_mhz); }},
          {"ceiling_bf16_tflops", [](const R& r) { return to_value(r.record.ceiling_bf16_tflops); }},
          {"ceiling_copy_gbps", [](const R& r) { return to_value(r.record.ceiling_copy_gbps); }},
          {"case_order", [](const R& r) { return to_value(r.measure().case_order); }},
      }};
  return table;
}

// ---- cases ------------------------------------------------------------------

// What one cases row is written from (after the key, run_id).
struct NewCase {
  const Case& identity;
  const CaseResult& result;
  std::string finished_at;

  bool on_gpu() const { return result.device.is_cuda(); }
  const std::optional<ProfileSummary>& profile() const { return result.profile; }
};

// <prefix>_median, <prefix>_p10, ...: one column per statistic, all NULL when
// the statistics are absent.
Fields<NewCase> statistics_fields(const std::string& prefix, std::optional<SampleStatistics> CaseResult::*statistics,
                                  const std::vector<std::pair<std::string, double SampleStatistics::*>>& columns) {
  Fields<NewCase> fields;
  for (const auto& [suffix, member] : columns) {
    fields.push_back({prefix + "_" + suffix, [statistics, member = member](const NewCase& c) {
                        const auto& stats = c.result.*statistics;
                        return stats ? to_value((*stats).*member) : Value{};
                      }});
  }
  return fields;
}

// GPU launches of one kind per forward (equal in every forward when
// counts_consistent); NULL on the CPU, where nothing is launched.
Field<NewCase> per_forward(const std::string& column, std::vector<int> ProfileSummary::*counts) {
  return {column, [counts](const NewCase& c) {
            if (!c.profile() || !c.on_gpu() || ((*c.profile()).*counts).empty()) return Value{};
            return to_value(((*c.profile()).*counts).front());
          }};
}

// A member of the profile summary; NULL when the case was not profiled (and,
// for GPU activity, on the CPU).
template <typename T>
Field<NewCase> from_profile(const std::string& column, T ProfileSummary::*member, bool gpu_only = false) {
  return {column, [member, gpu_only](const NewCase& c) {
            if (!c.profile() || (gpu_only && !c.on_gpu())) return Value{};
            return to_value((*c.profile()).*member);
          }};
}

std::string joined_warnings(const CaseResult& result) {
  std::string warnings;
  for (const auto& warning : result.warnings) warnings += (warnings.empty() ? "" : "; ") + warning;
  return warnings;
}

int eager_samples(const CaseResult& result) {
  int count = 0;
  for (const auto& sample : result.samples) count += sample.mode == SampleMode::eager ? 1 : 0;
  return count;
}

const Table<NewCase>& cases_table() {
  using C = NewCase;
  static const Table<C> table = [] {
    Fields<C> fields = {
        {"plan_index", [](const C& c) { return to_value(c.identity.plan_index); }},
        {"variant", [](const C& c) { return to_value(c.identity.variant); }},
        {"batch", [](const C& c) { return to_value(c.identity.shape.batch); }},
        {"heads", [](const C& c) { return to_value(c.identity.shape.heads); }},
        {"kv_heads", [](const C& c) { return to_value(c.identity.shape.kv_heads); }},
        {"seq_len_q", [](const C& c) { return to_value(c.identity.shape.seq_len_q); }},
        {"seq_len_kv", [](const C& c) { return to_value(c.identity.shape.seq_len_kv); }},
        {"head_dim", [](const C& c) { return to_value(c.identity.shape.head_dim); }},
        {"dtype", [](const C& c) { return to_value(c.identity.dtype); }},
        {"causal", [](const C& c) { return to_value(c.identity.causal); }},
        {"device", [](const C& c) { return to_value(c.result.device); }},
        {"status", [](const C& c) { return to_value(c.result.status); }},
        {"error_message", [](const C& c) { return null_if_empty(c.result.error_message); }},
        {"warnings", [](const C& c) { return null_if_empty(joined_warnings(c.result)); }},
        {"sdpa_backend", [](const C& c) { return null_if_empty(c.result.sdpa_backend); }},
        {"timer", [](const C& c) { return null_if_empty(c.result.timer); }},
        {"stop_reason", [](const C& c) { return null_if_empty(c.result.stop_reason); }},
        per_forward("kernels_per_forward", &ProfileSummary::kernels_each_forward),
        per_forward("memcpy_per_forward", &ProfileSummary::memcpy_each_forward),
        per_forward("memset_per_forward", &ProfileSummary::memset_each_forward),
        from_profile("cpu_ops_per_forward", &ProfileSummary::cpu_ops_per_forward),
        from_profile("counts_consistent", &ProfileSummary::counts_consistent),
        from_profile("profile_attempts", &ProfileSummary::attempts),
        from_profile("profiled_forwards", &ProfileSummary::profiled_forwards),
        from_profile("kernel_time_us_per_forward", &ProfileSummary::kernel_time_us_per_forward, /*gpu_only=*/true),
    };
    const std::vector<std::pair<std::string, double SampleStatistics::*>> all = {
        {"median", &SampleStatistics::median}, {"p10", &SampleStatistics::p10},   {"p90", &SampleStatistics::p90},
        {"min", &SampleStatistics::min},       {"mean", &SampleStatistics::mean}, {"stdev", &SampleStatistics::stdev}};
    fields::append(fields, statistics_fields("gpu_time_us", &CaseResult::gpu_time_us, all));
    fields::append(fields, statistics_fields("cpu_time_us", &CaseResult::cpu_time_us, all));
    fields::append(fields, {
        {"samples", [](const C& c) { return null_unless_positive(eager_samples(c.result)); }},
        {"cpu_dispatch_us_median", [](const C& c) { return to_value(c.result.cpu_dispatch_us_median); }},
        {"rel_error", [](const C& c) { return to_value(c.result.rel_error); }},
        {"peak_mem_bytes", [](const C& c) { return to_value(c.result.peak_mem_bytes); }},
        {"flops", [](const C& c) { return to_value(c.result.flops); }},
        {"min_bytes", [](const C& c) { return to_value(c.result.min_bytes); }},
        {"tflops", [](const C& c) { return to_value(c.result.tflops); }},
        {"bandwidth_gbps", [](const C& c) { return to_value(c.result.bandwidth_gbps); }},
        {"trace_path", [](const C& c) { return null_if_empty(c.result.trace_path); }},
        {"wall_seconds", [](const C& c) { return null_unless_finite(c.result.wall_seconds); }},
        {"finished_at", [](const C& c) { return to_value(c.finished_at); }},
    });
    fields::append(fields, statistics_fields("graph_time_us", &CaseResult::graph_time_us,
                                             {{"median", &SampleStatistics::median},
                                              {"p10", &SampleStatistics::p10},
                                              {"p90", &SampleStatistics::p90},
                                              {"min", &SampleStatistics::min}}));
    fields::append(fields, {
        {"graph_samples",
         [](const C& c) { return c.result.graph_time_us ? to_value(c.result.graph_time_us->count) : Value{}; }},
        {"graph_error", [](const C& c) { return null_if_empty(c.result.graph_error); }},
        {"sm_clock_mhz_mean", [](const C& c) { return to_value(c.result.sm_clock_mhz_mean); }},
        {"throttled_samples",
         [](const C& c) { return only_if(c.on_gpu() && !c.result.samples.empty(), c.result.throttled_samples); }},
        {"launch_latency_hidden", [](const C& c) { return to_value(c.result.launch_latency_hidden); }},
        // The precision of the median the case reports: the GPU's on CUDA, the CPU's on the CPU.
        {"median_ci_rel", [](const C& c) {
           const auto& primary = c.result.gpu_time_us ? c.result.gpu_time_us : c.result.cpu_time_us;
           return primary ? to_value(primary->median_ci_rel) : Value{};
         }},
        {"setup_seconds", [](const C& c) { return null_unless_finite(c.result.phases.setup); }},
        {"accuracy_seconds", [](const C& c) { return null_unless_finite(c.result.phases.accuracy); }},
        {"warmup_seconds", [](const C& c) { return null_unless_finite(c.result.phases.warmup); }},
        {"timing_seconds", [](const C& c) { return null_unless_finite(c.result.phases.timing); }},
        {"graph_seconds", [](const C& c) { return null_unless_finite(c.result.phases.graph); }},
        {"profile_seconds", [](const C& c) { return null_unless_finite(c.result.phases.profile); }},
    });
    return Table<C>{"cases", {"run_id"}, std::move(fields)};
  }();
  return table;
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
  static const std::string sql = fields::insert_sql(runs_table());
  SQLite::Statement insert(db, sql);
  fields::bind_row(insert, runs_table(), {}, NewRun{run, utc_now_iso8601()});
  insert.exec();
  return db.getLastInsertRowid();
}

std::int64_t Store::add_case(std::int64_t run_id, const Case& c, const CaseResult& result) {
  auto& db = impl_->database;
  SQLite::Transaction transaction(db);
  static const std::string case_sql = fields::insert_sql(cases_table());
  SQLite::Statement insert(db, case_sql);
  fields::bind_row(insert, cases_table(), {run_id}, NewCase{c, result, utc_now_iso8601()});
  insert.exec();
  const std::int64_t case_id = db.getLastInsertRowid();

  if (result.profile) {
    static const std::string kernel_sql = fields::insert_sql(fields::kernels_table());
    SQLite::Statement kernel(db, kernel_sql);
    for (const auto& k : result.profile->kernels) {
      fields::bind_row(kernel, fields::kernels_table(), {case_id}, k);
      kernel.exec();
      kernel.reset();
    }
    static const std::string op_sql = fields::insert_sql(fields::ops_table());
    SQLite::Statement op(db, op_sql);
    for (const auto& o : result.profile->ops) {
      fields::bind_row(op, fields::ops_table(), {case_id}, o);
      op.exec();
      op.reset();
    }
  }
  static const std::string sample_sql = fields::insert_sql(fields::samples_table());
  SQLite::Statement sample(db, sample_sql);
  std::map<SampleMode, std::int64_t> next_index;  // numbered per mode
  for (const auto& s : result.samples) {
    fields::bind_row(sample, fields::samples_table(), {case_id, next_index[s.mode]++}, s);
    sample.exec();
    sample.reset();
  }
  transaction.commit();
  return case_id;
}

void Store::finish_run(std::int64_t run_id, RunStatus status) {
  SQLite::Statement update(impl_->database, "UPDATE runs SET status = ?, finished_at = ? WHERE run_id = ?");
  update.bind(1, to_string(status));
  update.bind(2, utc_now_iso8601());
  update.bind(3, run_id);
  update.exec();
}

void Store::reopen_run(std::int64_t run_id) {
  SQLite::Statement update(impl_->database, "UPDATE runs SET status = ?, finished_at = NULL WHERE run_id = ?");
  update.bind(1, to_string(RunStatus::running));
  update.bind(2, run_id);
  update.exec();
}

}  // namespace attnsweep::storage
