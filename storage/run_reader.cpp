#include "storage/run_reader.hpp"

#include <SQLiteCpp/SQLiteCpp.h>
#include <nlohmann/json.hpp>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <utility>

#include "runner/common/errors.hpp"
#include "storage/database_files.hpp"
#include "storage/fields.hpp"
#include "storage/migrations.hpp"
#include "storage/open_for_reading.hpp"
#include "storage/store.hpp"

namespace attnsweep::storage {
namespace {

using fields::OneOf;
using fields::OutOfDomain;
using fields::Table;
using fields::kAtLeastOne;
using fields::kNotNegative;
using fields::kShare;
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
                               member<R>("planned_cases", &R::planned_cases, kNotNegative),
                               member<R>("isolate", &R::isolate),
                               member<R>("case_order", &R::case_order),
                               member<R>("ceiling_bf16_tflops", &R::ceiling_bf16_tflops, kNotNegative),
                               member<R>("ceiling_copy_gbps", &R::ceiling_copy_gbps, kNotNegative),
                               member<R>("owner_pid", &R::owner_pid, kAtLeastOne),
                               member<R>("owner_host", &R::owner_host),
                               member<R>("claimed_at", &R::claimed_at),
                               member<R>("heartbeat_at", &R::heartbeat_at),
                               member<R>("run_uuid", &R::run_uuid),
                               member<R>("sweep_id", &R::sweep_id),
                               member<R>("shard_index", &R::shard_index, kNotNegative),
                               member<R>("shard_count", &R::shard_count, kAtLeastOne),
                               member<R>("shard_source", &R::shard_source),
                               member<R>("shard_split", &R::shard_split),
                               member<R>("sweep_cases", &R::sweep_cases, kNotNegative),
                               member<R>("gpus", &R::gpus),
                               member<R>("container_image", &R::container_image),
                               member<R>("measure_regime", &R::measure_regime, OneOf{measure_regime_names()}),
                               member<R>("power_limit_w", &R::power_limit_w, kNotNegative),
                               member<R>("sm_clock_start_mhz", &R::sm_clock_start_mhz, kNotNegative),
                               member<R>("mem_clock_start_mhz", &R::mem_clock_start_mhz, kNotNegative),
                               member<R>("temperature_start_c", &R::temperature_start_c),
                               member<R>("env_vars", &R::env_vars),
                               member<R>("trace_path_base", &R::trace_path_base, OneOf{{"database", "working_directory"}})}};
  return table;
}

// `causal` and `causal_bottom_right` (schema 12) together give the mask's
// alignment: each column, when 1, sets its own; `causal` comes first, so a
// bottom-right 1 read after it wins. A 0 of `causal` leaves no alignment.
fields::Field<CaseRow> mask_alignment(const char* column, CausalAlignment when_set) {
  return fields::Field<CaseRow>{column,
                        [when_set](const CaseRow& c) { return fields::to_value(c.identity.mask.causal == when_set); },
                        [when_set](const SQLite::Column& value, const fields::Where& where, CaseRow& c) {
                          bool set = false;
                          fields::from_column(value, where, set);  // 0 or 1, the schema's CHECK
                          if (set) {
                            c.identity.mask.causal = when_set;
                          } else if (when_set == CausalAlignment::top_left) {
                            c.identity.mask.causal = CausalAlignment::none;
                          }
                        }};
}

// A variable-length batch's lengths (schema 13): "512,3000" into the list; NULL leaves it empty.
// Held to the shape read before them: one length per sequence (batch of them),
// the longest seq_len_q (seq_len_kv), and key/value lengths exactly beside
// query lengths (a list without its partner crashed every reader, issue 33 item 8).
fields::Field<CaseRow> sequence_lengths(const char* column, std::vector<std::int64_t> Shape::*lengths,
                                        std::int64_t Shape::*longest) {
  return fields::Field<CaseRow>{
      column, [lengths](const CaseRow& c) { return fields::null_if_empty(lengths_text(c.identity.shape.*lengths)); },
      [lengths, longest](const SQLite::Column& value, const fields::Where& where, CaseRow& c) {
        const Shape& shape = c.identity.shape;
        const bool key_values = lengths == &Shape::seq_lens_kv;
        if (value.isNull()) {
          if (key_values && !shape.seq_lens_q.empty()) {
            throw OutOfDomain(where, value, "one key/value length per sequence (a list beside seq_lens_q)");
          }
          return;
        }
        if (key_values && shape.seq_lens_q.empty()) {
          throw OutOfDomain(where, value, "NULL (seq_lens_q is NULL: a uniform batch)");
        }
        std::vector<std::int64_t> parsed;
        try {
          parsed = parse_lengths(value.isText() ? value.getString() : std::string());
        } catch (const BadInputError&) {
          throw OutOfDomain(where, value, "positive integers separated by commas");
        }
        if (parsed.size() != static_cast<std::size_t>(shape.batch)) {
          throw OutOfDomain(where, value, "one length per sequence (batch " + std::to_string(shape.batch) + ")");
        }
        const std::int64_t most = *std::max_element(parsed.begin(), parsed.end());
        if (most != shape.*longest) {
          throw OutOfDomain(where, value, std::string("lengths whose longest is ") +
                                              (key_values ? "seq_len_kv (" : "seq_len_q (") +
                                              std::to_string(shape.*longest) + ")");
        }
        c.identity.shape.*lengths = std::move(parsed);
      }};
}

// The columns of `cases` a CaseRow holds.
const Table<CaseRow>& case_rows() {
  using C = CaseRow;
  static const Table<C> table{"cases",
                              {},
                              {member<C>("case_id", &C::case_id),
                               member<C>("run_id", &C::run_id),
                               member<C>("plan_index", [](auto& c) -> auto& { return c.identity.plan_index; }, kNotNegative),
                               member<C>("variant", [](auto& c) -> auto& { return c.identity.variant; }),
                               member<C>("batch", [](auto& c) -> auto& { return c.identity.shape.batch; }, kAtLeastOne),
                               member<C>("heads", [](auto& c) -> auto& { return c.identity.shape.heads; }, kAtLeastOne),
                               member<C>("kv_heads", [](auto& c) -> auto& { return c.identity.shape.kv_heads; }, kAtLeastOne),
                               member<C>("seq_len_q", [](auto& c) -> auto& { return c.identity.shape.seq_len_q; }, kAtLeastOne),
                               member<C>("seq_len_kv", [](auto& c) -> auto& { return c.identity.shape.seq_len_kv; }, kAtLeastOne),
                               member<C>("head_dim", [](auto& c) -> auto& { return c.identity.shape.head_dim; }, kAtLeastOne),
                               member<C>("dtype", [](auto& c) -> auto& { return c.identity.dtype; }),
                               mask_alignment("causal", CausalAlignment::top_left),
                               mask_alignment("causal_bottom_right", CausalAlignment::bottom_right),
                               member<C>("window_left", [](auto& c) -> auto& { return c.identity.mask.window_left; }, kNotNegative),
                               member<C>("window_right", [](auto& c) -> auto& { return c.identity.mask.window_right; }, kNotNegative),
                               sequence_lengths("seq_lens_q", &Shape::seq_lens_q, &Shape::seq_len_q),
                               sequence_lengths("seq_lens_kv", &Shape::seq_lens_kv, &Shape::seq_len_kv),
                               member<C>("page_size", [](auto& c) -> auto& { return c.identity.shape.page_size; }, kNotNegative),
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
                               member<C>("kernels_per_forward", &C::kernels_per_forward, kNotNegative),
                               member<C>("memcpy_per_forward", &C::memcpy_per_forward, kNotNegative),
                               member<C>("memset_per_forward", &C::memset_per_forward, kNotNegative),
                               member<C>("cpu_ops_per_forward", &C::cpu_ops_per_forward, kNotNegative),
                               member<C>("samples", &C::samples, kNotNegative),
                               member<C>("graph_samples", &C::graph_samples, kNotNegative),
                               member<C>("throttled_samples", &C::throttled_samples, kNotNegative),
                               member<C>("profile_attempts", &C::profile_attempts, kNotNegative),
                               member<C>("profiled_forwards", &C::profiled_forwards, kNotNegative),
                               member<C>("counts_consistent", &C::counts_consistent),
                               member<C>("launch_latency_hidden", &C::launch_latency_hidden),
                               member<C>("gpu_time_us_median", &C::gpu_time_us_median, kNotNegative),
                               member<C>("cpu_time_us_median", &C::cpu_time_us_median, kNotNegative),
                               member<C>("graph_time_us_median", &C::graph_time_us_median, kNotNegative),
                               member<C>("kernel_time_us_per_forward", &C::kernel_time_us_per_forward, kNotNegative),
                               member<C>("cpu_dispatch_us_median", &C::cpu_dispatch_us_median, kNotNegative),
                               member<C>("rel_error", &C::rel_error, kNotNegative),
                               member<C>("tflops", &C::tflops, kNotNegative),
                               member<C>("bandwidth_gbps", &C::bandwidth_gbps, kNotNegative),
                               member<C>("median_ci_rel", &C::median_ci_rel, kNotNegative),
                               member<C>("sm_clock_mhz_mean", &C::sm_clock_mhz_mean, kNotNegative),
                               member<C>("wall_seconds", &C::wall_seconds, kNotNegative),
                               member<C>("peak_mem_bytes", &C::peak_mem_bytes, kNotNegative),
                               member<C>("flops", &C::flops, kNotNegative),
                               member<C>("min_bytes", &C::min_bytes, kNotNegative),
                               member<C>("gpu_uuid", &C::gpu_uuid),
                               member<C>("shard_index", &C::shard_index, kNotNegative),
                               member<C>("power_cap_share", &C::power_cap_share, kShare),
                               member<C>("thermal_cap_share", &C::thermal_cap_share, kShare),
                               member<C>("numerics", &C::numerics, OneOf{{"ok", "beyond_bound", "nonfinite"}, /*or_null=*/true}),
                               member<C>("numerics_bound", &C::numerics_bound, kNotNegative),
                               member<C>("other_processes", &C::other_processes, kNotNegative),
                               member<C>("grad_rel_error_q", &C::grad_rel_error_q, kNotNegative),
                               member<C>("grad_rel_error_k", &C::grad_rel_error_k, kNotNegative),
                               member<C>("grad_rel_error_v", &C::grad_rel_error_v, kNotNegative),
                               member<C>("sdpa_backend_backward", &C::sdpa_backend_backward),
                               member<C>("validity", &C::validity, OneOf{{"ok", "suspect"}, /*or_null=*/true}),
                               member<C>("validity_reasons", &C::validity_reasons),
                               member<C>("graph_launches_per_replay", &C::graph_launches_per_replay, kNotNegative),
                               member<C>("graph_output_rel_diff", &C::graph_output_rel_diff, kNotNegative),
                               member<C>("energy_j", &C::energy_j, kNotNegative),
                               member<C>("energy_power_w", &C::energy_power_w, kNotNegative),
                               member<C>("energy_window_s", &C::energy_window_s, kNotNegative),
                               member<C>("energy_passes", &C::energy_passes, kNotNegative)}};
  return table;
}

// "SELECT <the table's fields> FROM <table> <rest>".
template <typename Row>
std::string select_sql(const Table<Row>& table, const std::string& rest) {
  return "SELECT " + fields::select_list(table) + " FROM " + table.name + " " + rest;
}

// The field `column` of a table: its position in the select list (read_row's order).
template <typename Row>
std::size_t position_of(const Table<Row>& table, const std::string& column) {
  std::size_t position = 0;
  for (const auto& field : table.fields) {
    if (field.column == column) return position;
    if (field.read) ++position;
  }
  throw std::logic_error(table.name + " has no field " + column);
}

// A value of the current row as stored, for a message about a row that could not be read.
std::string raw_text(const SQLite::Statement& statement, std::size_t position) {
  return fields::shown(statement.getColumn(static_cast<int>(position)));
}

// The case of a CaseRow as messages name it: "case 3 (sdpa_math 8x16x1024x64 bf16 causal)".
std::string case_named(const CaseRow& row) {
  return "case " + std::to_string(row.identity.plan_index) + " (" + row.identity.label() + ")";
}

// Rows of the runs table, each checked as read: "FILE: run N: runs.COLUMN = ...".
std::vector<RunRow> read_runs(SQLite::Statement& statement, const std::string& path) {
  std::vector<RunRow> rows;
  while (statement.executeStep()) {
    try {
      rows.push_back(fields::read_row(statement, run_rows()));
    } catch (const OutOfDomain& error) {
      throw DamagedDatabaseError(path + ": run " + statement.getColumn(0).getString() + ": " + error.what());
    }
  }
  return rows;
}

// Rows of the cases table: "FILE: run N, case P (LABEL): cases.COLUMN = ...". The
// label needs the whole identity (plan_index to pass, read first); a case whose
// identity is damaged is named by its stored plan_index and variant.
std::vector<CaseRow> read_cases(SQLite::Statement& statement, const std::string& path) {
  static const std::size_t run_column = position_of(case_rows(), "run_id");
  static const std::size_t plan_column = position_of(case_rows(), "plan_index");
  static const std::size_t variant_column = position_of(case_rows(), "variant");
  static const std::size_t last_identity_column = position_of(case_rows(), "pass");
  std::vector<CaseRow> rows;
  while (statement.executeStep()) {
    CaseRow row;
    try {
      fields::read_row_into(statement, case_rows(), row);
      rows.push_back(std::move(row));
    } catch (const OutOfDomain& error) {
      const bool identity_read = position_of(case_rows(), error.column()) > last_identity_column;
      const std::string named =
          identity_read ? case_named(row)
                        : "case " + raw_text(statement, plan_column) + " (" +
                              statement.getColumn(static_cast<int>(variant_column)).getString() + ")";
      throw DamagedDatabaseError(path + ": run " + raw_text(statement, run_column) + ", " + named + ": " + error.what());
    }
  }
  return rows;
}

// "run N, case P (LABEL)" of a case_id, for messages (its row is read and checked too).
std::string case_of(SQLite::Database& database, const std::string& path, std::int64_t case_id) {
  static const std::string sql = select_sql(case_rows(), "WHERE case_id = ?");
  SQLite::Statement query(database, sql);
  query.bind(1, case_id);
  const std::vector<CaseRow> rows = read_cases(query, path);
  if (rows.empty()) return "case_id " + std::to_string(case_id);
  return "run " + std::to_string(rows.front().run_id) + ", " + case_named(rows.front());
}

// A case's samples, kernels or ops (`sql` selects them by its one parameter, the
// case_id): "FILE: run N, case P (LABEL): samples.COLUMN = ...".
template <typename Row>
std::vector<Row> read_children(SQLite::Database& database, const std::string& path, const Table<Row>& table,
                               const std::string& sql, std::int64_t case_id) {
  SQLite::Statement statement(database, sql);
  statement.bind(1, case_id);
  std::vector<Row> rows;
  while (statement.executeStep()) {
    try {
      rows.push_back(fields::read_row(statement, table));
    } catch (const OutOfDomain& error) {
      throw DamagedDatabaseError(path + ": " + case_of(database, path, case_id) + ": " + error.what());
    }
  }
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
  query.bind(1, run_id);
  auto rows = read_runs(query, path_);
  if (rows.empty()) return std::nullopt;
  return std::move(rows.front());
}

std::optional<RunRow> RunReader::latest_run() const {
  static const std::string sql = select_sql(run_rows(), "ORDER BY run_id DESC LIMIT 1");
  SQLite::Statement query(impl_->database, sql);
  auto rows = read_runs(query, path_);
  if (rows.empty()) return std::nullopt;
  return std::move(rows.front());
}

std::vector<RunRow> RunReader::runs() const {
  static const std::string sql = select_sql(run_rows(), "ORDER BY run_id");
  SQLite::Statement query(impl_->database, sql);
  return read_runs(query, path_);
}

std::vector<CaseRow> RunReader::cases(std::int64_t run_id) const {
  static const std::string sql = select_sql(case_rows(), "WHERE run_id = ? ORDER BY plan_index");
  SQLite::Statement query(impl_->database, sql);
  query.bind(1, run_id);
  return read_cases(query, path_);
}

std::set<int> RunReader::stored_plan_indexes(std::int64_t run_id) const {
  SQLite::Statement query(impl_->database, "SELECT plan_index FROM cases WHERE run_id = ?");
  query.bind(1, run_id);
  std::set<int> indexes;
  while (query.executeStep()) {
    const SQLite::Column value = query.getColumn(0);
    if (!value.isInteger() || value.getInt64() < 0 || value.getInt64() > std::numeric_limits<int>::max()) {
      throw DamagedDatabaseError(path_ + ": run " + std::to_string(run_id) + ": cases.plan_index = " +
                                 fields::shown(value) + ": allowed: a whole number >= 0");
    }
    indexes.insert(value.getInt());
  }
  return indexes;
}

// kernels and ops keep no position column: their rowid is the order the store wrote them in.
std::vector<KernelStat> RunReader::kernels(std::int64_t case_id) const {
  static const std::string sql = select_sql(fields::kernels_table(), "WHERE case_id = ? ORDER BY rowid");
  return read_children(impl_->database, path_, fields::kernels_table(), sql, case_id);
}

std::vector<OpStat> RunReader::ops(std::int64_t case_id) const {
  static const std::string sql = select_sql(fields::ops_table(), "WHERE case_id = ? ORDER BY rowid");
  return read_children(impl_->database, path_, fields::ops_table(), sql, case_id);
}

std::vector<TimingSample> RunReader::samples(std::int64_t case_id) const {
  static const std::string sql =
      select_sql(fields::samples_table(), "WHERE case_id = ? ORDER BY mode <> 'eager', mode, sample_index");
  return read_children(impl_->database, path_, fields::samples_table(), sql, case_id);
}

void RunReader::check_run(std::int64_t run_id) const {
  run(run_id);
  for (const CaseRow& c : cases(run_id)) {
    samples(c.case_id);
    kernels(c.case_id);
    ops(c.case_id);
  }
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
