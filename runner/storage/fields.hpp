#pragma once
// Field tables: each stored table described once, as a list of columns and how
// each column's value is taken from (and, for rows read back, put into) a C++
// struct. The INSERT (column list, placeholders, binding) and the SELECT list
// and the reading of a row are generated from that one list, so a column is
// named in one place, for both directions. kernels, ops and samples are at
// the bottom; cases is case_columns.cpp's, runs is run_columns.cpp's.
// Internal to runner/storage/.
#include <SQLiteCpp/SQLiteCpp.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iomanip>
#include <limits>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "runner/common/identities.hpp"
#include "runner/measure/case_result.hpp"
#include "runner/profile/profile_summary.hpp"
#include "runner/storage/fact_role.hpp"
#include "runner/storage/stored_value.hpp"

namespace attnsweep::storage::fields {

using storage::Display;
using storage::Value;  // std::monostate is NULL (stored_value.hpp)

// ---- C++ values to stored values --------------------------------------------
inline Value to_value(int value) { return std::int64_t{value}; }
inline Value to_value(std::int64_t value) { return value; }
inline Value to_value(std::uint64_t value) { return static_cast<std::int64_t>(value); }  // a seed: same 64 bits
// A stored REAL is finite: a value that is not (a ratio over a zero median) is
// NULL, never Inf or NaN, which the readers refuse as a damaged database.
inline Value to_value(double value) { return std::isfinite(value) ? Value{value} : Value{}; }
inline Value to_value(bool value) { return std::int64_t{value ? 1 : 0}; }
inline Value to_value(const std::string& text) { return text; }
inline Value to_value(const char* text) { return std::string(text); }  // not the bool overload
inline Value to_value(const Device& device) { return device.to_string(); }
inline Value to_value(CaseStatus status) { return to_value(to_string(status)); }
inline Value to_value(RunStatus status) { return to_value(to_string(status)); }
inline Value to_value(Dtype dtype) { return to_value(to_string(dtype)); }
inline Value to_value(SampleMode mode) { return to_value(to_string(mode)); }
inline Value to_value(CaseOrder order) { return to_value(to_string(order)); }
inline Value to_value(Pass pass) { return to_value(to_string(pass)); }
template <typename T>
Value to_value(const std::optional<T>& value) {
  return value ? to_value(*value) : Value{};
}

// The NULL rules, named.
inline Value null_if_empty(const std::string& text) { return text.empty() ? Value{} : Value{text}; }
inline Value null_unless_finite(double value) { return std::isfinite(value) ? Value{value} : Value{}; }
template <typename T>
Value null_unless_positive(T value) {  // counts and sizes where 0 means unknown
  return value > 0 ? to_value(value) : Value{};
}
template <typename T>
Value only_if(bool applies, const T& value) {  // e.g. GPU-only settings on a CPU run
  return applies ? to_value(value) : Value{};
}

inline void bind_value(SQLite::Statement& statement, int position, const Value& value) {
  if (const auto* integer = std::get_if<std::int64_t>(&value)) {
    statement.bind(position, *integer);
  } else if (const auto* real = std::get_if<double>(&value)) {
    statement.bind(position, *real);
  } else if (const auto* text = std::get_if<std::string>(&value)) {
    statement.bind(position, *text);
  } else {
    statement.bind(position);  // NULL
  }
}

// ---- Stored values back to C++ values -----------------------------------------
// A value is read only when it is of its column's type and in its domain (the
// schema's CHECK sets, and what the store can write: times, counts and sizes
// that are not negative, finite numbers, one length per sequence). Anything
// else is a damaged database (issue 33, items 7, 8 and 11): the read throws
// OutOfDomain, and the reader names the file and the case (run_reader.cpp).

// Where a value was read from, for errors: "cases.status". Built only when needed.
struct Where {
  const std::string& table;
  const std::string& column;
  std::string text() const { return table + "." + column; }
};

// A number as messages show it: -5, 2.5, 1e+300, inf.
inline std::string number_text(double value) {
  std::ostringstream text;
  text << std::setprecision(15) << value;
  return text.str();
}

// A stored value as messages show it: NULL, -5, 'text' (at most 60 characters,
// control characters as '?', so that the message stays one line).
inline std::string shown(const SQLite::Column& column) {
  if (column.isNull()) return "NULL";
  if (column.isInteger()) return std::to_string(column.getInt64());
  if (column.isFloat()) return number_text(column.getDouble());
  if (column.isBlob()) return "a blob of " + std::to_string(column.getBytes()) + " bytes";
  std::string text = column.getString();
  const bool cut = text.size() > 60;
  if (cut) text.resize(60);
  for (char& c : text) c = (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? '?' : c;
  return "'" + text + (cut ? "...'" : "'");
}

// A stored value outside its column's type or domain: "cases.samples = -2:
// allowed: a whole number >= 0". `column()` names the column alone.
class OutOfDomain : public std::runtime_error {
 public:
  OutOfDomain(const Where& where, const SQLite::Column& value, const std::string& allowed, bool wrong_type = false)
      : std::runtime_error(where.text() + " = " + shown(value) + (wrong_type ? " (" + type_name(value) + ")" : "") +
                           ": allowed: " + allowed),
        column_(where.column) {}
  const std::string& column() const { return column_; }

 private:
  static std::string type_name(const SQLite::Column& value) {
    if (value.isInteger()) return "integer";
    if (value.isFloat()) return "real";
    if (value.isText()) return "text";
    return value.isBlob() ? "blob" : "null";
  }
  std::string column_;
};

// Numbers: a whole number only from an INTEGER, a number from an INTEGER or a
// finite REAL (SQLite stores NaN as NULL; an infinity the store never writes).
// NULL in a column read as a plain number leaves the default (NOT NULL columns).
inline void expect_whole(const SQLite::Column& column, const Where& where) {
  if (!column.isInteger()) throw OutOfDomain(where, column, "a whole number", /*wrong_type=*/true);
}
inline void from_column(const SQLite::Column& column, const Where& where, int& out) {
  if (column.isNull()) return;
  expect_whole(column, where);
  const std::int64_t value = column.getInt64();
  if (value < std::numeric_limits<int>::min() || value > std::numeric_limits<int>::max()) {
    throw OutOfDomain(where, column, "a whole number of at most 32 bits");
  }
  out = static_cast<int>(value);
}
inline void from_column(const SQLite::Column& column, const Where& where, std::int64_t& out) {
  if (column.isNull()) return;
  expect_whole(column, where);
  out = column.getInt64();
}
inline void from_column(const SQLite::Column& column, const Where& where, std::uint64_t& out) {
  if (column.isNull()) return;
  expect_whole(column, where);
  out = static_cast<std::uint64_t>(column.getInt64());  // a seed or reason bits: the same 64 bits
}
inline void from_column(const SQLite::Column& column, const Where& where, double& out) {
  if (column.isNull()) return;
  if (!column.isInteger() && !column.isFloat()) {
    throw OutOfDomain(where, column, "a number", /*wrong_type=*/true);
  }
  if (!std::isfinite(column.getDouble())) throw OutOfDomain(where, column, "a finite number");
  out = column.getDouble();
}
inline void from_column(const SQLite::Column& column, const Where& where, bool& out) {
  if (column.isNull()) return;
  if (!column.isInteger() || (column.getInt64() != 0 && column.getInt64() != 1)) {
    throw OutOfDomain(where, column, "0 or 1");
  }
  out = column.getInt64() == 1;
}
// NULL text reads as an empty string (the store writes empty strings as NULL).
inline void from_column(const SQLite::Column& column, const Where&, std::string& out) {
  out = column.isNull() ? std::string() : column.getString();
}

// The identities: a spelling the identities do not know is an error, never a default.
template <typename T, typename Parse>
void parse_column(const SQLite::Column& column, const Where& where, T& out, Parse parse, const std::string& allowed) {
  const std::string text = column.isText() ? column.getString() : std::string();
  const std::optional<T> parsed = parse(text);
  if (!parsed) throw OutOfDomain(where, column, allowed);
  out = *parsed;
}
inline std::string listed(const std::vector<std::string>& names) {
  std::string text;
  for (const auto& name : names) text += (text.empty() ? "" : ", ") + name;
  return text;
}
inline void from_column(const SQLite::Column& column, const Where& where, Device& out) {
  parse_column(
      column, where, out,
      [](const std::string& text) {
        const std::optional<Device> device = Device::try_parse(text);
        return device && device->is_resolved() ? device : std::nullopt;  // stored devices are cpu or cuda:N
      },
      "cpu, cuda:N");
}
inline void from_column(const SQLite::Column& column, const Where& where, CaseStatus& out) {
  parse_column(column, where, out, parse_case_status, listed(case_status_names()));
}
inline void from_column(const SQLite::Column& column, const Where& where, RunStatus& out) {
  parse_column(column, where, out, parse_run_status, listed(run_status_names()));
}
inline void from_column(const SQLite::Column& column, const Where& where, Dtype& out) {
  parse_column(column, where, out, parse_dtype, listed(dtype_names()));
}
inline void from_column(const SQLite::Column& column, const Where& where, SampleMode& out) {
  parse_column(column, where, out, parse_sample_mode, listed(sample_mode_names()));
}
inline void from_column(const SQLite::Column& column, const Where& where, CaseOrder& out) {
  parse_column(column, where, out, parse_case_order, listed(case_order_names()));
}
inline void from_column(const SQLite::Column& column, const Where& where, Pass& out) {
  parse_column(column, where, out, parse_pass, listed(pass_names()));
}
template <typename T>
void from_column(const SQLite::Column& column, const Where& where, std::optional<T>& out) {
  if (column.isNull()) {
    out.reset();
    return;
  }
  T value{};
  from_column(column, where, value);
  out = std::move(value);
}

// ---- Domains: what a column may hold beyond its type ------------------------------
// Each returns "" for a value in it, else what is allowed; an empty optional
// (NULL) is in every domain.

// Numbers from `low` (to `high`): times, counts and sizes are never negative.
struct Within {
  double low;
  double high = std::numeric_limits<double>::infinity();
  template <typename T>
  std::string operator()(const T& value) const {
    const double v = static_cast<double>(value);
    if (v >= low && v <= high) return "";
    const std::string kind = std::is_integral_v<T> ? "a whole number" : "a number";
    if (std::isinf(high)) return kind + " >= " + number_text(low);
    return kind + " from " + number_text(low) + " to " + number_text(high);
  }
};
inline const Within kNotNegative{0};
inline const Within kAtLeastOne{1};
inline const Within kShare{0, 1};

// A text column's CHECK set; `or_null`: NULL (read as "") is allowed too.
struct OneOf {
  std::vector<std::string> names;
  bool or_null = false;
  std::string operator()(const std::string& text) const {
    if (text.empty() && or_null) return "";
    for (const auto& name : names) {
      if (text == name) return "";
    }
    return listed(names) + (or_null ? " or NULL" : "");
  }
};

template <typename Check, typename T>
std::string outside(const Check& check, const T& value) {
  return check(value);
}
template <typename Check, typename T>
std::string outside(const Check& check, const std::optional<T>& value) {
  return value ? check(*value) : std::string();
}

// ---- Fields and tables ----------------------------------------------------------

// One column of a table, and how its value comes from a `Row` (write) and goes
// back into one (read). A field only written (a value computed from the row)
// has no read; a field only read has no write.
template <typename Row>
struct Field {
  using Write = std::function<Value(const Row&)>;
  using Read = std::function<void(const SQLite::Column&, const Where&, Row&)>;

  Field(std::string column, Write write, Read read = {})
      : column(std::move(column)), write(std::move(write)), read(std::move(read)) {}

  std::string column;
  Write write;
  Read read;
  Display display;
  // A derived field, read only: the SQL expression SQLite computes it with
  // (the results view's), selected as the column; empty for a stored column.
  std::string expression;

  // A runs column that compare reports where two runs differ, and how that
  // change bears on times (fact_role.hpp, run_facts.hpp); none for any other.
  std::optional<FactRole> fact;

  Field shown(Display how) && {
    display = std::move(how);
    return std::move(*this);
  }
  Field as_fact(FactRole role) && {
    fact = role;
    return std::move(*this);
  }
};

template <typename Row>
using Fields = std::vector<Field<Row>>;

// A column that holds one member of the row as it is, written and read back.
// `access` gives the member: a pointer to member, or `[](auto& row) -> auto& {...}`
// for a nested one.
template <typename Row, typename Access>
Field<Row> member(std::string column, Access access) {
  return Field<Row>{std::move(column),
                    [access](const Row& row) { return to_value(std::invoke(access, row)); },
                    [access](const SQLite::Column& value, const Where& where, Row& row) {
                      from_column(value, where, std::invoke(access, row));
                    }};
}

// The same, its value held to `check`'s domain (Within, OneOf) when read.
template <typename Row, typename Access, typename Check>
Field<Row> member(std::string column, Access access, Check check) {
  Field<Row> field = member<Row>(std::move(column), access);
  field.read = [access, check](const SQLite::Column& value, const Where& where, Row& row) {
    auto& out = std::invoke(access, row);
    from_column(value, where, out);
    const std::string allowed = outside(check, out);
    if (!allowed.empty()) throw OutOfDomain(where, value, allowed);
  };
  return field;
}

// A text member stored as NULL when empty (and read back as empty).
template <typename Row, typename Access>
Field<Row> text_or_null(std::string column, Access access) {
  Field<Row> field = member<Row>(std::move(column), access);
  field.write = [access](const Row& row) { return null_if_empty(std::invoke(access, row)); };
  return field;
}

// The same, held to `check` (OneOf) when read.
template <typename Row, typename Access, typename Check>
Field<Row> text_or_null(std::string column, Access access, Check check) {
  Field<Row> field = member<Row>(std::move(column), access, check);
  field.write = [access](const Row& row) { return null_if_empty(std::invoke(access, row)); };
  return field;
}

// A table: its name, the key columns its caller binds first (the row's parent
// and place, e.g. case_id), and its fields.
template <typename Row>
struct Table {
  std::string name;
  std::vector<std::string> keys;
  Fields<Row> fields;
};

template <typename Row>
void append(Fields<Row>& fields, Fields<Row> more) {
  for (auto& field : more) fields.push_back(std::move(field));
}

// Whether a row writes the field: not one only read (case_id, given by SQLite)
// nor a derived one (computed when read).
template <typename Row>
bool stored(const Field<Row>& field) {
  return field.write && field.expression.empty();
}

// "key..., column...": the columns a row writes, in bind_row()'s order.
template <typename Row>
std::string insert_columns(const Table<Row>& table) {
  std::string columns;
  for (const auto& key : table.keys) columns += (columns.empty() ? "" : ", ") + key;
  for (const auto& field : table.fields) {
    if (stored(field)) columns += (columns.empty() ? "" : ", ") + field.column;
  }
  return columns;
}

// "?, ?, ...": one placeholder per insert_columns() column.
template <typename Row>
std::string insert_placeholders(const Table<Row>& table) {
  std::string placeholders;
  std::size_t count = table.keys.size();
  for (const auto& field : table.fields) count += stored(field) ? 1 : 0;
  for (std::size_t i = 0; i < count; ++i) placeholders += i == 0 ? "?" : ", ?";
  return placeholders;
}

// "INSERT INTO name (key..., column...) VALUES (?, ...)": build it once per table.
template <typename Row>
std::string insert_sql(const Table<Row>& table) {
  return "INSERT INTO " + table.name + " (" + insert_columns(table) + ") VALUES (" + insert_placeholders(table) + ")";
}

// Binds the keys (in table.keys order), then every field, to an insert_sql()
// statement (or one that names insert_columns() from `first` on); returns the
// position after the last one bound.
template <typename Row>
int bind_row(SQLite::Statement& statement, const Table<Row>& table, const std::vector<Value>& keys, const Row& row,
             int first = 1) {
  if (keys.size() != table.keys.size()) throw std::logic_error(table.name + ": wrong number of key values");
  int position = first;
  for (const auto& key : keys) bind_value(statement, position++, key);
  for (const auto& field : table.fields) {
    if (stored(field)) bind_value(statement, position++, field.write(row));
  }
  return position;
}

// "a, b, c": the fields a row is read from, for a SELECT (read_row() reads them in this order).
template <typename Row>
std::string select_list(const Table<Row>& table) {
  std::string columns;
  for (const auto& field : table.fields) {
    if (!field.read) continue;
    columns += (columns.empty() ? "" : ", ") + (field.expression.empty() ? field.column : field.expression);
  }
  return columns;
}

// How many columns select_list(table) names.
template <typename Row>
int selected_count(const Table<Row>& table) {
  int count = 0;
  for (const auto& field : table.fields) count += field.read ? 1 : 0;
  return count;
}

// The field named `column`, for a printer that picks columns by name; throws
// std::logic_error for a name the table does not have (a programming error).
template <typename Row>
const Field<Row>& field_named(const Table<Row>& table, const std::string& column) {
  for (const auto& field : table.fields) {
    if (field.column == column) return field;
  }
  throw std::logic_error(table.name + " has no column " + column);
}

// The current row of a statement that selected select_list(table) first (or
// from column `first` on), into `row` field by field: when a value is out of
// its domain (OutOfDomain), the fields before it are read.
template <typename Row>
void read_row_into(const SQLite::Statement& statement, const Table<Row>& table, Row& row, int first = 0) {
  int index = first;
  for (const auto& field : table.fields) {
    if (field.read) field.read(statement.getColumn(index++), Where{table.name, field.column}, row);
  }
}
template <typename Row>
Row read_row(const SQLite::Statement& statement, const Table<Row>& table) {
  Row row{};
  read_row_into(statement, table, row);
  return row;
}

// ---- Views, read as their readers always took them ---------------------------------
// A computed column of a view (claim_results, choice, results) is not held to a
// domain: TEXT (or a blob) as it is, an INTEGER in decimal, "" for NULL and REAL ...
inline std::string view_text(const SQLite::Column& value) {
  if (value.isText() || value.isBlob()) return value.getString();
  if (value.isInteger()) return std::to_string(value.getInt64());
  return "";
}
// ... and a REAL or INTEGER as a number, nothing for NULL and TEXT.
inline std::optional<double> view_number(const SQLite::Column& value) {
  if (value.isFloat() || value.isInteger()) return value.getDouble();
  return std::nullopt;
}

// Fields of a view, read only, that way.
template <typename Row>
Field<Row> view_text_field(std::string column, std::string Row::*member) {
  return Field<Row>{std::move(column), {},
                    [member](const SQLite::Column& value, const Where&, Row& row) { row.*member = view_text(value); }};
}
template <typename Row>
Field<Row> view_number_field(std::string column, std::optional<double> Row::*member) {
  return Field<Row>{std::move(column), {},
                    [member](const SQLite::Column& value, const Where&, Row& row) { row.*member = view_number(value); }};
}

// ---- The tables the store writes and the reader reads back as they are ----------

// kernels: case_id, then one column per KernelStat member.
inline const Table<KernelStat>& kernels_table() {
  using K = KernelStat;
  static const Table<K> table{"kernels",
                              {"case_id"},
                              {member<K>("name", &K::name),
                               member<K>("kind", &K::kind, OneOf{{"kernel", "memcpy", "memset"}}),
                               member<K>("launches_per_forward", &K::launches_per_forward, kNotNegative),
                               member<K>("total_us", &K::total_us, kNotNegative),
                               member<K>("mean_us", &K::mean_us, kNotNegative),
                               member<K>("min_us", &K::min_us, kNotNegative),
                               member<K>("max_us", &K::max_us, kNotNegative),
                               member<K>("stream", &K::stream),
                               text_or_null<K>("grid", &K::grid),
                               text_or_null<K>("block", &K::block),
                               member<K>("registers_per_thread", &K::registers_per_thread, kNotNegative),
                               member<K>("shared_memory_bytes", &K::shared_memory_bytes, kNotNegative),
                               member<K>("blocks_per_sm", &K::blocks_per_sm, kNotNegative),
                               member<K>("warps_per_sm", &K::warps_per_sm, kNotNegative),
                               member<K>("est_occupancy_pct", &K::est_occupancy_pct, kNotNegative),
                               member<K>("dram_read_bytes", &K::dram_read_bytes, kNotNegative),
                               member<K>("dram_write_bytes", &K::dram_write_bytes, kNotNegative),
                               member<K>("l2_hit_rate", &K::l2_hit_rate, kShare),
                               member<K>("sm_throughput", &K::sm_throughput, kShare),
                               member<K>("tensor_pipe", &K::tensor_pipe, kShare)}};
  return table;
}

// ops: case_id, then one column per OpStat member.
inline const Table<OpStat>& ops_table() {
  using O = OpStat;
  static const Table<O> table{"ops",
                              {"case_id"},
                              {member<O>("name", &O::name),
                               member<O>("kind", &O::kind, OneOf{{"op", "cuda_runtime", "cuda_driver"}}),
                               member<O>("calls_per_forward", &O::calls_per_forward, kNotNegative),
                               member<O>("self_cpu_us", &O::self_cpu_us, kNotNegative),
                               member<O>("total_cpu_us", &O::total_cpu_us, kNotNegative)}};
  return table;
}

// samples: case_id and sample_index (numbered per mode by the store), then one
// column per TimingSample member.
inline const Table<TimingSample>& samples_table() {
  using S = TimingSample;
  static const Table<S> table{"samples",
                              {"case_id", "sample_index"},
                              {member<S>("gpu_time_us", &S::gpu_time_us, kNotNegative),
                               member<S>("cpu_time_us", &S::cpu_time_us, kNotNegative),
                               member<S>("host_dispatch_us", &S::host_dispatch_us, kNotNegative),
                               member<S>("mode", &S::mode),
                               member<S>("sm_clock_mhz", &S::sm_clock_mhz, kNotNegative),
                               member<S>("throttled", &S::throttled),
                               member<S>("blocked", &S::blocked),
                               member<S>("block_timed_out", &S::block_timed_out),
                               member<S>("clock_event_reasons", &S::clock_event_reasons)}};
  return table;
}

}  // namespace attnsweep::storage::fields
