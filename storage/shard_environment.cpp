#include "storage/shard_environment.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <set>

namespace attnsweep::storage {
namespace {

std::string shown(const std::string& value) { return value.empty() ? "empty" : "'" + value + "'"; }

// runs.env_vars: a JSON object of name -> value; a text that is not one counts as one value under "".
std::map<std::string, std::string> variables_of(const std::string& text) {
  std::map<std::string, std::string> variables;
  if (text.empty()) return variables;
  const nlohmann::json parsed = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object()) {
    variables[""] = text;
    return variables;
  }
  for (const auto& [name, value] : parsed.items()) variables[name] = value.is_string() ? value.get<std::string>() : value.dump();
  return variables;
}

}  // namespace

std::vector<std::string> shard_environment_differences(const RunRow& run, const RunRow& reference) {
  std::vector<std::string> differences;
  const std::pair<const char*, std::string RunRow::*> facts[] = {
      {"torch_version", &RunRow::torch_version},   {"cuda_version", &RunRow::cuda_version},
      {"cudnn_version", &RunRow::cudnn_version},   {"device_name", &RunRow::device_name},
      {"driver_version", &RunRow::driver_version}, {"attnsweep_version", &RunRow::attnsweep_version}};
  for (const auto& [name, member] : facts) {
    if (run.*member != reference.*member) {
      differences.push_back(std::string(name) + " " + shown(run.*member) + ", not " + shown(reference.*member));
    }
  }
  const auto variables = variables_of(run.env_vars), reference_variables = variables_of(reference.env_vars);
  std::set<std::string> names;
  for (const auto& entry : variables) names.insert(entry.first);
  for (const auto& entry : reference_variables) names.insert(entry.first);
  for (const std::string& name : names) {
    const auto value = variables.find(name), reference_value = reference_variables.find(name);
    const bool set = value != variables.end(), reference_set = reference_value != reference_variables.end();
    if (set == reference_set && (!set || value->second == reference_value->second)) continue;
    differences.push_back("env_vars " + (name.empty() ? std::string("text") : name) + " " +
                          (set ? "'" + value->second + "'" : "unset") + ", not " +
                          (reference_set ? "'" + reference_value->second + "'" : "unset"));
  }
  return differences;
}

}  // namespace attnsweep::storage
