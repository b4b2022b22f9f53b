#include "runner/storage/run_facts.hpp"

#include "runner/storage/run_columns.hpp"

namespace attnsweep::storage {
namespace {

// A stored value as compare writes it.
std::string fact_text(const fields::Value& value) {
  if (const auto* integer = std::get_if<std::int64_t>(&value)) return std::to_string(*integer);
  if (const auto* real = std::get_if<double>(&value)) return fields::number_text(*real);
  if (const auto* text = std::get_if<std::string>(&value)) return *text;
  return "";
}

}  // namespace

const std::vector<RunFact>& run_facts() {
  static const std::vector<RunFact> facts = [] {
    std::vector<RunFact> listed;
    for (const auto& field : run_columns().fields) {
      if (!field.fact) continue;
      const auto write = field.write;
      listed.push_back({field.column, *field.fact, [write](const RunRow& run) { return fact_text(write(run)); }});
    }
    return listed;
  }();
  return facts;
}

MovesTimes moves_times(const std::string& fact) {
  const std::string variable = "env_vars.";
  if (fact.rfind(variable, 0) == 0) {
    return variable_moves_times(fact.substr(variable.size())) ? MovesTimes::yes : MovesTimes::no;
  }
  for (const RunFact& known : run_facts()) {
    if (known.name == fact) return known.role.moves_times;
  }
  return MovesTimes::no;
}

}  // namespace attnsweep::storage
