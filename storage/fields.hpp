#pragma once
// Field tables: each stored table described once, as a list of columns and how
// each column's value is taken from (and, for rows read back, put into) a C++
// struct. The INSERT (column list, placeholders, binding) and the SELECT list
// and the reading of a row are generated from that one list, so a column is
// named in one place. The tables written and read alike (kernels, ops,
// samples) are at the bottom; runs and cases are written by store.cpp and read
// by run_reader.cpp from their own lists. Internal to storage/.
#include <SQLiteCpp/SQLiteCpp.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "runner/common/identities.hpp"
#include "runner/measure/case_result.hpp"
#include "runner/profile/profile_summary.hpp"

namespace attnsweep::storage::fields {

// A value as SQLite stores it; std::monostate is NULL.
using Value = std::variant<std::monostate, std::int64_t, double, std::string>;

// ---- C++ values to stored values --------------------------------------------
inline Value to_value(int value) { return std::int64_t{value}; }
inline Value to_value(std::int64_t value) { return value; }
inline Value to_value(std::uint64_t value) { return static_cast<std::int64_t>(value); }  // a seed: same 64 bits
inline Value to_value(double value) { return value; }
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

// Where a value was read from, for errors: "cases.status". Built only when needed.
struct Where {
  const std::string& table;
  const std::string& column;
  std::string text() const { return table + "." + column; }
};

inline void from_column(const SQLite::Column& column, const Where&, int& out) { out = column.getInt(); }
inline void from_column(const SQLite::Column& column, const Where&, std::int64_t& out) {
  out = column.getInt64();
}
inline void from_column(const SQLite::Column& column, const Where&, std::uint64_t& out) {
  out = static_cast<std::uint64_t>(column.getInt64());
}
inline void from_column(const SQLite::Column& column, const Where&, double& out) { out = column.getDouble(); }
inline void from_column(const SQLite::Column& column, const Where&, bool& out) { out = column.getInt() != 0; }
// NULL text reads as an empty string (the store writes empty strings as NULL).
inline void from_column(const SQLite::Column& column, const Where&, std::string& out) {
  out = column.isNull() ? std::string() : column.getString();
}

// The identities: a spelling the identities do not know is an error, never a default.
template <typename T, typename Parse>
void parse_column(const SQLite::Column& column, const Where& where, T& out, Parse parse) {
  const std::string text = column.isNull() ? std::string() : column.getString();
  const std::optional<T> parsed = parse(text);
  if (!parsed) throw std::runtime_error(where.text() + ": unknown value '" + text + "'");
  out = *parsed;
}
inline void from_column(const SQLite::Column& column, const Where& where, Device& out) {
  parse_column(column, where, out, [](const std::string& text) {
    const std::optional<Device> device = Device::try_parse(text);
    return device && device->is_resolved() ? device : std::nullopt;  // stored devices are cpu or cuda:N
  });
}
inline void from_column(const SQLite::Column& column, const Where& where, CaseStatus& out) {
  parse_column(column, where, out, parse_case_status);
}
inline void from_column(const SQLite::Column& column, const Where& where, RunStatus& out) {
  parse_column(column, where, out, parse_run_status);
}
inline void from_column(const SQLite::Column& column, const Where& where, Dtype& out) {
  parse_column(column, where, out, parse_dtype);
}
inline void from_column(const SQLite::Column& column, const Where& where, SampleMode& out) {
  parse_column(column, where, out, parse_sample_mode);
}
inline void from_column(const SQLite::Column& column, const Where& where, CaseOrder& out) {
  parse_column(column, where, out, parse_case_order);
}
inline void from_column(const SQLite::Column& column, const Where& where, Pass& out) {
  parse_column(column, where, out, parse_pass);
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

// A text member stored as NULL when empty (and read back as empty).
template <typename Row, typename Access>
Field<Row> text_or_null(std::string column, Access access) {
  Field<Row> field = member<Row>(std::move(column), access);
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

// "INSERT INTO name (key..., column...) VALUES (?, ...)": build it once per table.
template <typename Row>
std::string insert_sql(const Table<Row>& table) {
  std::string columns, placeholders;
  auto add = [&](const std::string& column) {
    columns += (columns.empty() ? "" : ", ") + column;
    placeholders += placeholders.empty() ? "?" : ", ?";
  };
  for (const auto& key : table.keys) add(key);
  for (const auto& field : table.fields) {
    if (!field.write) throw std::logic_error(table.name + "." + field.column + " has no value to write");
    add(field.column);
  }
  return "INSERT INTO " + table.name + " (" + columns + ") VALUES (" + placeholders + ")";
}

// Binds the keys (in table.keys order), then every field, to an insert_sql() statement.
template <typename Row>
void bind_row(SQLite::Statement& statement, const Table<Row>& table, const std::vector<Value>& keys, const Row& row) {
  if (keys.size() != table.keys.size()) throw std::logic_error(table.name + ": wrong number of key values");
  int position = 1;
  for (const auto& key : keys) bind_value(statement, position++, key);
  for (const auto& field : table.fields) bind_value(statement, position++, field.write(row));
}

// "a, b, c": the fields a row is read from, for a SELECT (read_row() reads them in this order).
template <typename Row>
std::string select_list(const Table<Row>& table) {
  std::string columns;
  for (const auto& field : table.fields) {
    if (field.read) columns += (columns.empty() ? "" : ", ") + field.column;
  }
  return columns;
}

// The current row of a statement that selected select_list(table) first.
template <typename Row>
Row read_row(const SQLite::Statement& statement, const Table<Row>& table) {
  Row row{};
  int index = 0;
  for (const auto& field : table.fields) {
    if (field.read) field.read(statement.getColumn(index++), Where{table.name, field.column}, row);
  }
  return row;
}

// ---- The tables the store writes and the reader reads back as they are ----------

// kernels: case_id, then one column per KernelStat member.
inline const Table<KernelStat>& kernels_table() {
  using K = KernelStat;
  static const Table<K> table{"kernels",
                              {"case_id"},
                              {member<K>("name", &K::name),
                               member<K>("kind", &K::kind),
                               member<K>("launches_per_forward", &K::launches_per_forward),
                               member<K>("total_us", &K::total_us),
                               member<K>("mean_us", &K::mean_us),
                               member<K>("min_us", &K::min_us),
                               member<K>("max_us", &K::max_us),
                               member<K>("stream", &K::stream),
                               text_or_null<K>("grid", &K::grid),
                               text_or_null<K>("block", &K::block),
                               member<K>("registers_per_thread", &K::registers_per_thread),
                               member<K>("shared_memory_bytes", &K::shared_memory_bytes),
                               member<K>("blocks_per_sm", &K::blocks_per_sm),
                               member<K>("warps_per_sm", &K::warps_per_sm),
                               member<K>("est_occupancy_pct", &K::est_occupancy_pct)}};
  return table;
}

// ops: case_id, then one column per OpStat member.
inline const Table<OpStat>& ops_table() {
  using O = OpStat;
  static const Table<O> table{"ops",
                              {"case_id"},
                              {member<O>("name", &O::name),
                               member<O>("kind", &O::kind),
                               member<O>("calls_per_forward", &O::calls_per_forward),
                               member<O>("self_cpu_us", &O::self_cpu_us),
                               member<O>("total_cpu_us", &O::total_cpu_us)}};
  return table;
}

// samples: case_id and sample_index (numbered per mode by the store), then one
// column per TimingSample member.
inline const Table<TimingSample>& samples_table() {
  using S = TimingSample;
  static const Table<S> table{"samples",
                              {"case_id", "sample_index"},
                              {member<S>("gpu_time_us", &S::gpu_time_us),
                               member<S>("cpu_time_us", &S::cpu_time_us),
                               member<S>("host_dispatch_us", &S::host_dispatch_us),
                               member<S>("mode", &S::mode),
                               member<S>("sm_clock_mhz", &S::sm_clock_mhz),
                               member<S>("throttled", &S::throttled),
                               member<S>("blocked", &S::blocked),
                               member<S>("block_timed_out", &S::block_timed_out),
                               member<S>("clock_event_reasons", &S::clock_event_reasons)}};
  return table;
}

}  // namespace attnsweep::storage::fields
