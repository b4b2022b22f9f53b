#include "runner/storage/run_device_columns.hpp"

#include <nlohmann/json.hpp>

#include <string>

#include "runner/device/environment_facts.hpp"
#include "runner/storage/run_columns.hpp"

namespace attnsweep::storage {
namespace {

using fields::OutOfDomain;
using fields::Value;

// An environment fact as run_devices stores it: its JSON value as a column's
// (env_vars as compact JSON text, "{}" when none is set).
Value stored_fact(const EnvironmentFact& fact, const EnvironmentInfo& environment) {
  const nlohmann::json value = fact.get(environment);
  if (value.is_null()) return Value{};
  if (value.is_object()) return env_vars_json(environment);
  if (value.is_string()) return value.get<std::string>();
  if (value.is_boolean()) return fields::to_value(value.get<bool>());
  if (value.is_number_integer()) return static_cast<std::int64_t>(value.get<std::int64_t>());
  if (value.is_number_unsigned()) return fields::to_value(value.get<std::uint64_t>());
  return fields::to_value(value.get<double>());
}

// The inverse: the stored value as the fact's JSON (env_vars' text parsed
// back into its object), set into the environment. A value the fact cannot
// take is a damaged database.
void read_fact(const EnvironmentFact& fact, const SQLite::Column& value, const fields::Where& where,
               EnvironmentInfo& out) {
  nlohmann::json json;
  if (value.isInteger()) {
    json = value.getInt64();
  } else if (value.isFloat()) {
    json = value.getDouble();
  } else if (!value.isNull()) {
    json = value.getString();
  }
  const bool object = fact.get(EnvironmentInfo{}).is_object();
  if (object && json.is_string()) json = nlohmann::json::parse(json.get<std::string>(), nullptr, /*allow_exceptions=*/false);
  if (object && json.is_discarded()) throw OutOfDomain(where, value, "a JSON object");
  try {
    fact.set(out, json);
  } catch (const std::exception&) {
    throw OutOfDomain(where, value, "a value of the fact's type", /*wrong_type=*/true);
  }
}

}  // namespace

const fields::Table<RunDevice>& run_device_columns() {
  using D = RunDevice;
  static const fields::Table<D> table = [] {
    fields::Table<D> built{"run_devices", {"recorded_at"}, {}};
    for (const EnvironmentFact& fact : environment_facts()) {
      if (!fact.stored_in_run_devices()) continue;
      built.fields.push_back(fields::Field<D>{
          fact.name, [&fact](const D& row) { return stored_fact(fact, row.environment); },
          [&fact](const SQLite::Column& value, const fields::Where& where, D& row) {
            read_fact(fact, value, where, row.environment);
          }});
    }
    fields::append(built.fields, {fields::member<D>("ceiling_bf16_tflops", &D::ceiling_bf16_tflops, fields::kNotNegative),
                                  fields::member<D>("ceiling_copy_gbps", &D::ceiling_copy_gbps, fields::kNotNegative)});
    return built;
  }();
  return table;
}

}  // namespace attnsweep::storage
