#include "runner/storage/run_reader.hpp"

#include <SQLiteCpp/SQLiteCpp.h>
#include <nlohmann/json.hpp>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <utility>

#include "runner/common/errors.hpp"
#include "runner/plan/case_axes.hpp"
#include "runner/storage/case_columns.hpp"
#include "runner/storage/claim_columns.hpp"
#include "runner/storage/database_files.hpp"
#include "runner/storage/fields.hpp"
#include "runner/storage/migrations.hpp"
#include "runner/storage/open_for_reading.hpp"
#include "runner/storage/run_columns.hpp"
#include "runner/storage/run_device_columns.hpp"
#include "runner/storage/store.hpp"
#include "runner/storage/view_columns.hpp"

namespace attnsweep::storage {
namespace {

using fields::OneOf;
using fields::OutOfDomain;
using fields::Table;
using fields::kAtLeastOne;
using fields::kNotNegative;
using fields::kShare;
using fields::member;

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
      rows.push_back(fields::read_row(statement, run_columns()));
    } catch (const OutOfDomain& error) {
      throw DamagedDatabaseError(path + ": run " + statement.getColumn(0).getString() + ": " + error.what());
    }
  }
  return rows;
}

// The first of read_runs' rows (a query of one run), none when it selects none.
std::optional<RunRow> first_run(SQLite::Statement& statement, const std::string& path) {
  std::vector<RunRow> rows = read_runs(statement, path);
  if (rows.empty()) return std::nullopt;
  return std::move(rows.front());
}

// Rows of the cases table: "FILE: run N, case P (LABEL): cases.COLUMN = ...". The
// label needs the whole identity (plan_index and every axis's columns, read first); a case whose
// identity is damaged is named by its stored plan_index and variant.
std::vector<CaseRow> read_cases(SQLite::Statement& statement, const std::string& path) {
  static const std::size_t run_column = position_of(case_columns(), "run_id");
  static const std::size_t plan_column = position_of(case_columns(), "plan_index");
  static const std::size_t variant_column = position_of(case_columns(), "variant");
  static const std::size_t last_identity_column = position_of(case_columns(), case_axes().back().columns.back());
  std::vector<CaseRow> rows;
  while (statement.executeStep()) {
    CaseRow row;
    try {
      fields::read_row_into(statement, case_columns(), row);
      rows.push_back(std::move(row));
    } catch (const OutOfDomain& error) {
      const bool identity_read = position_of(case_columns(), error.column()) > last_identity_column;
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
  static const std::string sql = select_sql(case_columns(), "WHERE case_id = ?");
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
  static const std::string sql = select_sql(run_columns(), "WHERE run_id = ?");
  SQLite::Statement query(impl_->database, sql);
  query.bind(1, run_id);
  return first_run(query, path_);
}

std::optional<RunRow> RunReader::latest_run() const {
  static const std::string sql = select_sql(run_columns(), "ORDER BY run_id DESC LIMIT 1");
  SQLite::Statement query(impl_->database, sql);
  return first_run(query, path_);
}

std::vector<RunRow> RunReader::runs() const {
  static const std::string sql = select_sql(run_columns(), "ORDER BY run_id");
  SQLite::Statement query(impl_->database, sql);
  return read_runs(query, path_);
}

std::vector<CaseRow> RunReader::cases(std::int64_t run_id) const {
  static const std::string sql = select_sql(case_columns(), "WHERE run_id = ? ORDER BY plan_index");
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

std::vector<RunDevice> RunReader::run_devices(std::int64_t run_id) const {
  static const std::string sql = select_sql(run_device_columns(), "WHERE run_id = ? ORDER BY rowid");
  SQLite::Statement query(impl_->database, sql);
  query.bind(1, run_id);
  std::vector<RunDevice> rows;
  while (query.executeStep()) {
    try {
      rows.push_back(fields::read_row(query, run_device_columns()));
    } catch (const OutOfDomain& error) {
      throw DamagedDatabaseError(path_ + ": run " + std::to_string(run_id) + ": " + error.what());
    }
  }
  return rows;
}

std::vector<ClaimResult> RunReader::claim_results(std::int64_t run_id) const {
  static const int claim_fields = fields::selected_count(claim_columns());
  static const std::string sql = "SELECT " + fields::select_list(claim_columns()) + ", " +
                                 fields::select_list(claim_result_columns()) +
                                 " FROM claim_results WHERE run_id = ? ORDER BY claim_id";
  SQLite::Statement query(impl_->database, sql);
  query.bind(1, run_id);
  std::vector<ClaimResult> rows;
  while (query.executeStep()) {
    ClaimResult row;
    try {
      fields::read_row_into(query, claim_columns(), static_cast<ClaimRow&>(row));
      fields::read_row_into(query, claim_result_columns(), row, claim_fields);
    } catch (const OutOfDomain& error) {
      // claims_file and name come first, so they are read.
      throw DamagedClaimError(path_ + ": run " + std::to_string(run_id), row.claims_file + ":" + row.name,
                              error.what());
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

namespace {

// A view's rows of a run: read leniently, never refused (view_columns.hpp).
template <typename Row>
std::vector<Row> view_rows(SQLite::Database& database, const fields::Table<Row>& table, const std::string& sql,
                           std::int64_t run_id) {
  SQLite::Statement query(database, sql);
  query.bind(1, run_id);
  std::vector<Row> rows;
  while (query.executeStep()) rows.push_back(fields::read_row(query, table));
  return rows;
}

}  // namespace

std::vector<ChoiceRow> RunReader::choices(std::int64_t run_id) const {
  static const std::string sql = select_sql(choice_columns(), "WHERE run_id = ?");
  return view_rows(impl_->database, choice_columns(), sql, run_id);
}

std::vector<CaseShares> RunReader::case_shares(std::int64_t run_id) const {
  static const std::string sql = select_sql(case_share_columns(), "WHERE run_id = ?");
  return view_rows(impl_->database, case_share_columns(), sql, run_id);
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

}  // namespace attnsweep::storage
