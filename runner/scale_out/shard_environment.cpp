#include "runner/scale_out/shard_environment.hpp"

#include <map>
#include <set>

namespace attnsweep::scale_out {
namespace {

std::string shown(const std::string& value) { return value.empty() ? "empty" : "'" + value + "'"; }

}  // namespace

std::vector<std::string> shard_environment_differences(const RunRow& run, const RunRow& reference) {
  std::vector<std::string> differences;
  const std::pair<const char*, std::string RunRow::*> facts[] = {
      {"torch_version", &RunRow::torch_version},   {"cuda_version", &RunRow::cuda_version},
      {"cudnn_version", &RunRow::cudnn_version},   {"device_name", &RunRow::device_name},
      {"driver_version", &RunRow::driver_version}, {"attnsweep_version", &RunRow::attnsweep_version},
      // Each op library's build (a SHA-256 of the files its loader loads): a rebuilt library is another kernel.
      {"op_libraries", &RunRow::op_libraries}};
  for (const auto& [name, member] : facts) {
    if (run.*member != reference.*member) {
      differences.push_back(std::string(name) + " " + shown(run.*member) + ", not " + shown(reference.*member));
    }
  }
  const auto variables = env_vars_of(run.env_vars), reference_variables = env_vars_of(reference.env_vars);
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

}  // namespace attnsweep::scale_out
