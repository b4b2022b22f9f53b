#include "storage/run_reader.hpp"

#include <SQLiteCpp/SQLiteCpp.h>
#include <nlohmann/json.hpp>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "runner/common/errors.hpp"
#include "storage/database_files.hpp"
#include "storage/fields.hpp"
#include "storage/migrations.hpp"
#include "storage/open_for_reading.hpp"
#include "storage/store.hpp"

namespace attnsweep::storage {
namespace {

using fields::Table;
using fields::member;

// The columns of `runs` a RunRow holds, each read by its member's type.
const Table<RunRow>& run_rows() {
  using R = RunRow;
  static const Table<R> table{"runs",
                              {},
                              {member<R>("run_id", &R::run_id),
                               member<R>("name", &R::name),
                               member<R>("description", &R::description),
                               member<R>("config_path", &R::config_path),
                               member<R>("config_yaml", &R::config_yaml),
                               member<R>("config_sha256", &R::config_sha256),
                               member<R>("status", &R::status),
                               member<R>("started_at", &R::started_at),
                               member<R>("finished_at", &R::finished_at),
                               member<R>("device", &R::device),
                               member<R>("device_name", &R::device_name),
                               member<R>("hostname", &R::hostname),
                               member<R>("torch_version", &R::torch_version),
                               member<R>("cuda_version", &R::cuda_version),
                               member<R>("cudnn_version", &R::cudnn_version),
                               member<R>("driver_version", &R::driver_version),
                               member<R>("attnsweep_version", &R::attnsweep_version),
                               member<R>("git_sha", &R::git_sha),
                               member<R>("timing_protocol", &R::timing_protocol),
                               member<R>("flop_convention", &R::flop_convention),
                               member<R>("seed", &R::seed),
                               member<R>("planned_cases", &R::planned_cases),
                               member<R>("isolate", &R::isolate),
                               member<R>("case_order", &R::case_order),
                               member<R>("ceiling_bf16_tflops", &R::ceiling_bf16_tflops),
                               member<R>("ceiling_copy_gbps", &R::ceiling_copy_gbps),
                               member<R>("owner_pid", &R::owner_pid),
                               member<R>("owner_host", &R::owner_host),
                               member<R>("claimed_at", &R::claimed_at),
                               member<R>("heartbeat_at", &R::heartbeat_at),
                               member<R>("run_uuid", &R::run_uuid),
                               member<R>("sweep_id", &R::sweep_id),
                               member<R>("shard_index", &R::shard_index),
                               member<R>("shard_count", &R::shard_count),
                               member<R>("shard_source", &R::shard_source),
                               member<R>("shard_split", &R::shard_split),
                               member<R>("sweep_cases", &R::sweep_cases),
                               member<R>("gpus", &R::gpus),
                               member<R>("container_image", &R::container_image),
                               member<R>("measure_regime", &R::measure_regime),
                               member<R>("power_limit_w", &R::power_limit_w),
                               member<R>("sm_clock_start_mhz", &R::sm_clock_start_mhz),
                               member<R>("mem_clock_start_mhz", &R::mem_clock_start_mhz),
                               member<R>("temperature_start_c", &R::temperature_start_c),
                               member<R>("env_vars", &R::env_vars),
                               member<R>("trace_path_base", &R::trace_path_base)}};
  return table;
}

// `causal` and `causal_bottom_right` (schema 12) together give the mask's
// alignment: each column, when 1, sets its own; `causal` comes first, so a
// bottom-right 1 read after it wins. A 0 of `causal` leaves no alignment.
fields::Field<CaseRow> mask_alignment(const char* column, CausalAlignment when_set) {
  return fields::Field<CaseRow>{column,
                        [when_set](const CaseRow& c) { return fields::to_value(c.identity.mask.causal == when_set); },
                        [when_set](const SQLite::Column& value, const fields::Where&, CaseRow& c) {
                          if (value.getInt() != 0) {
                            c.identity.mask.causal = when_set;
                          } else if (when_set == CausalAlignment::top_left) {
                            c.identity.mask.causal = CausalAlignment::none;
                          }
                        }};
}

// A variable-length batch's lengths (schema 13): "512,3000" into the list; NULL leaves it empty.
fields::Field<CaseRow> sequence_lengths(const char* column, std::vector<std::int64_t> Shape::*lengths) {
  return fields::Field<CaseRow>{
      column, [lengths](const CaseRow& c) { return fields::null_if_empty(lengths_text(c.identity.shape.*lengths)); },
      [lengths](const SQLite::Column& value, const fields::Where& where, CaseRow& c) {
        if (value.isNull()) return;
        try {
          c.identity.shape.*lengths = parse_lengths(value.getString());
        } catch (const BadInputError& error) {
          throw std::runtime_error(where.text() + ": " + error.what());
        }
      }};
}

// The columns of `cases` a CaseRow holds.
const Table<CaseRow>& case_rows() {
  using C = CaseRow;
  static const Table<C> table{"cases",
                              {},
                              {member<C>("case_id", &C::case_id),
                               member<C>("run_id", &C::run_id),
                               member<C>("plan_index", [](auto& c) -> auto& { return c.identity.plan_index; }),
                               member<C>("variant", [](auto& c) -> auto& { return c.identity.variant; }),
                               member<C>("batch", [](auto& c) -> auto& { return c.identity.shape.batch; }),
                               member<C>("heads", [](auto& c) -> auto& { return c.identity.shape.heads; }),
                               member<C>("kv_heads", [](auto& c) -> auto& { return c.identity.shape.kv_heads; }),
                               member<C>("seq_len_q", [](auto& c) -> auto& { return c.identity.shape.seq_len_q; }),
                               member<C>("seq_len_kv", [](auto& c) -> auto& { return c.identity.shape.seq_len_kv; }),
                               member<C>("head_dim", [](auto& c) -> auto& { return c.identity.shape.head_dim; }),
                               member<C>("dtype", [](auto& c) -> auto& { return c.identity.dtype; }),
                               mask_alignment("causal", CausalAlignment::top_left),
                               mask_alignment("causal_bottom_right", CausalAlignment::bottom_right),
                               member<C>("window_left", [](auto& c) -> auto& { return c.identity.mask.window_left; }),
                               member<C>("window_right", [](auto& c) -> auto& { return c.identity.mask.window_right; }),
                               sequence_lengths("seq_lens_q", &Shape::seq_lens_q),
                               sequence_lengths("seq_lens_kv", &Shape::seq_lens_kv),
                               member<C>("page_size", [](auto& c) -> auto& { return c.identity.shape.page_size; }),
                               member<C>("pass", [](auto& c) -> auto& { return c.identity.pass; }),
                               member<C>("device", &C::device),
                               member<C>("status", &C::status),
                               member<C>("error_message", &C::error_message),
                               member<C>("warnings", &C::warnings),
                               member<C>("sdpa_backend", &C::sdpa_backend),
                               member<C>("timer", &C::timer),
                               member<C>("stop_reason", &C::stop_reason),
                               member<C>("trace_path", &C::trace_path),
                               member<C>("graph_error", &C::graph_error),
                               member<C>("finished_at", &C::finished_at),
                               member<C>("kernels_per_forward", &C::kernels_per_forward),
                               member<C>("memcpy_per_forward", &C::memcpy_per_forward),
                               member<C>("memset_per_forward", &C::memset_per_forward),
                               member<C>("cpu_ops_per_forward", &C::cpu_ops_per_forward),
                               member<C>("samples", &C::samples),
                               member<C>("graph_samples", &C::graph_samples),
                               member<C>("throttled_samples", &C::throttled_samples),
                               member<C>("profile_attempts", &C::profile_attempts),
                               member<C>("profiled_forwards", &C::profiled_forwards),
                               member<C>("counts_consistent", &C::counts_consistent),
                               member<C>("launch_latency_hidden", &C::launch_latency_hidden),
                               member<C>("gpu_time_us_median", &C::gpu_time_us_median),
                               member<C>("cpu_time_us_median", &C::cpu_time_us_median),
                               member<C>("graph_time_us_median", &C::graph_time_us_median),
                               member<C>("kernel_time_us_per_forward", &C::kernel_time_us_per_forward),
                               member<C>("cpu_dispatch_us_median", &C::cpu_dispatch_us_median),
                               member<C>("rel_error", &C::rel_error),
                               member<C>("tflops", &C::tflops),
                               member<C>("bandwidth_gbps", &C::bandwidth_gbps),
                               member<C>("median_ci_rel", &C::median_ci_rel),
                               member<C>("sm_clock_mhz_mean", &C::sm_clock_mhz_mean),
                               member<C>("wall_seconds", &C::wall_seconds),
                               member<C>("peak_mem_bytes", &C::peak_mem_bytes),
                               member<C>("flops", &C::flops),
                               member<C>("min_bytes", &C::min_bytes),
                               member<C>("gpu_uuid", &C::gpu_uuid),
                               member<C>("shard_index", &C::shard_index),
                               member<C>("power_cap_share", &C::power_cap_share),
                               member<C>("thermal_cap_share", &C::thermal_cap_share),
                               member<C>("numerics", &C::numerics),
                               member<C>("numerics_bound", &C::numerics_bound),
                               member<C>("other_processes", &C::other_processes),
                               member<C>("grad_rel_error_q", &C::grad_rel_error_q),
                               member<C>("grad_rel_error_k", &C::grad_rel_error_k),
                               member<C>("grad_rel_error_v", &C::grad_rel_error_v),
                               member<C>("sdpa_backend_backward", &C::sdpa_backend_backward),
                               member<C>("validity", &C::validity),
                               member<C>("validity_reasons", &C::validity_reasons),
                               member<C>("graph_launches_per_replay", &C::graph_launches_per_replay),
                               member<C>("graph_output_rel_diff", &C::graph_output_rel_diff),
                               member<C>("energy_j", &C::energy_j),
                               member<C>("energy_power_w", &C::energy_power_w),
                               member<C>("energy_window_s", &C::energy_window_s),
                               member<C>("energy_passes", &C::energy_passes)}};
  return table;
}

// "SELECT <the table's fields> FROM <table> <rest>".
template <typename Row>
std::string select_sql(const Table<Row>& table, const std::string& rest) {
  return "SELECT " + fields::select_list(table) + " FROM " + table.name + " " + rest;
}

// Every row of a statement that selected the table's fields, `key` bound to its one parameter.
template <typename Row>
std::vector<Row> read_all(SQLite::Statement& statement, const Table<Row>& table, std::int64_t key) {
  statement.bind(1, key);
  std::vector<Row> rows;
  while (statement.executeStep()) rows.push_back(fields::read_row(statement, table));
  return rows;
}

}  // namespace

struct RunReader::Impl {
  SQLite::Database database;
  explicit Impl(const std::string& path) : database(open_for_reading(path)) {}
};

RunReader::RunReader(const std::string& path) : path_(path) {
  refuse_side_file_name(path);
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    if (errno == ENOENT) throw BadInputError(path + ": database not found");
    throw BadInputError(path + ": cannot read as a results database: " + std::strerror(errno));
  }
  // Opening a FIFO would block until something writes to it.
  if (!S_ISREG(info.st_mode)) throw BadInputError(path + ": is not a regular file, so not a results database");
  try {
    impl_ = std::make_unique<Impl>(path);
    auto& db = impl_->database;
    db.exec("BEGIN");  // one snapshot for the reads
    const int version = recognise_schema_version(db, path);
    db.exec("COMMIT");
    if (version == 0) {
      throw BadInputError(path + ": is not an attnsweep results database (it is empty); choose another --db");
    }
    if (version < kSchemaVersion) {
      // Reading never writes; attnsweep run migrates the file when it opens it.
      throw BadInputError(path + ": database schema version " + std::to_string(version) +
                          " is older than this attnsweep reads (" + std::to_string(kSchemaVersion) +
                          "); any attnsweep run with this --db migrates it");
    }
  } catch (const SQLite::Exception& error) {
    throw BadInputError(path + ": cannot read as a results database: " + error.what());
  }
}

RunReader::~RunReader() = default;
RunReader::RunReader(RunReader&&) noexcept = default;
RunReader& RunReader::operator=(RunReader&&) noexcept = default;

std::optional<RunRow> RunReader::run(std::int64_t run_id) const {
  static const std::string sql = select_sql(run_rows(), "WHERE run_id = ?");
  SQLite::Statement query(impl_->database, sql);
  auto rows = read_all(query, run_rows(), run_id);
  if (rows.empty()) return std::nullopt;
  return std::move(rows.front());
}

std::optional<RunRow> RunReader::latest_run() const {
  static const std::string sql = select_sql(run_rows(), "ORDER BY run_id DESC LIMIT 1");
  SQLite::Statement query(impl_->database, sql);
  if (!query.executeStep()) return std::nullopt;
  return fields::read_row(query, run_rows());
}

std::vector<RunRow> RunReader::runs() const {
  static const std::string sql = select_sql(run_rows(), "ORDER BY run_id");
  SQLite::Statement query(impl_->database, sql);
  std::vector<RunRow> rows;
  while (query.executeStep()) rows.push_back(fields::read_row(query, run_rows()));
  return rows;
}

std::vector<CaseRow> RunReader::cases(std::int64_t run_id) const {
  static const std::string sql = select_sql(case_rows(), "WHERE run_id = ? ORDER BY plan_index");
  SQLite::Statement query(impl_->database, sql);
  return read_all(query, case_rows(), run_id);
}

std::set<int> RunReader::stored_plan_indexes(std::int64_t run_id) const {
  SQLite::Statement query(impl_->database, "SELECT plan_index FROM cases WHERE run_id = ?");
  query.bind(1, run_id);
  std::set<int> indexes;
  while (query.executeStep()) indexes.insert(query.getColumn(0).getInt());
  return indexes;
}

// kernels and ops keep no position column: their rowid is the order the store wrote them in.
std::vector<KernelStat> RunReader::kernels(std::int64_t case_id) const {
  static const std::string sql = select_sql(fields::kernels_table(), "WHERE case_id = ? ORDER BY rowid");
  SQLite::Statement query(impl_->database, sql);
  return read_all(query, fields::kernels_table(), case_id);
}

std::vector<OpStat> RunReader::ops(std::int64_t case_id) const {
  static const std::string sql = select_sql(fields::ops_table(), "WHERE case_id = ? ORDER BY rowid");
  SQLite::Statement query(impl_->database, sql);
  return read_all(query, fields::ops_table(), case_id);
}

std::vector<TimingSample> RunReader::samples(std::int64_t case_id) const {
  static const std::string sql =
      select_sql(fields::samples_table(), "WHERE case_id = ? ORDER BY mode <> 'eager', mode, sample_index");
  SQLite::Statement query(impl_->database, sql);
  return read_all(query, fields::samples_table(), case_id);
}

std::map<std::string, std::string> env_vars_of(const std::string& json_text) {
  std::map<std::string, std::string> variables;
  if (json_text.empty()) return variables;
  const nlohmann::json parsed = nlohmann::json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object()) {
    variables[""] = json_text;
    return variables;
  }
  for (const auto& [name, value] : parsed.items()) variables[name] = value.is_string() ? value.get<std::string>() : value.dump();
  return variables;
}

std::vector<std::string> CaseRow::validity_codes() const {
  std::vector<std::string> codes;
  std::size_t start = 0;
  while (start < validity_reasons.size()) {
    std::size_t end = validity_reasons.find("; ", start);
    if (end == std::string::npos) end = validity_reasons.size();
    const std::string reason = validity_reasons.substr(start, end - start);
    codes.push_back(reason.substr(0, reason.find(':')));
    start = end + 2;
  }
  return codes;
}

}  // namespace attnsweep::storage
