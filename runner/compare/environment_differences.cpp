#include "runner/compare/environment_differences.hpp"

#include <set>

#include "runner/storage/run_facts.hpp"

namespace attnsweep::compare {

std::vector<EnvironmentDifference> environment_differences(const ComparedRun& baseline, const ComparedRun& candidate) {
  std::vector<EnvironmentDifference> differences;
  const auto add = [&](const std::string& fact, const std::string& a, const std::string& b, bool breaks_timing) {
    if (a != b) differences.push_back({fact, a, b, breaks_timing});
  };
  // Where either run is on the CPU, the GPU's facts are not compared: no CPU sample waits
  // for a cool-down, so the regime does not move a CPU time, and a CPU run has no power
  // limit or clocks. CPU runs stored before issue 55 hold the config's regime (`burst` in the
  // saved databases of schemas 7-10, with a GPU's power limit and clock too): compared, they
  // made every later CPU night INCONCLUSIVE. Different kinds of device are a warning of their own.
  const bool on_cpu = baseline.run.device.is_cpu() || candidate.run.device.is_cpu();
  for (const storage::RunFact& fact : storage::run_facts()) {
    if (on_cpu && fact.role.gpu_only) continue;
    add(fact.name, fact.text(baseline.run), fact.text(candidate.run),
        fact.role.moves_times == storage::MovesTimes::unlike);
  }
  // env_vars key by key: a variable set on one side only shows as "(unset)" on
  // the other. A run from before schema 7 has no env_vars at all (NULL): nothing
  // is known about its variables, which is one difference, not "(unset)" each.
  if (baseline.run.env_vars.empty() != candidate.run.env_vars.empty()) {
    const auto shown = [](const std::string& text) { return text.empty() ? std::string("(not recorded)") : text; };
    differences.push_back({"env_vars", shown(baseline.run.env_vars), shown(candidate.run.env_vars), false});
    return differences;
  }
  const auto base_variables = storage::env_vars_of(baseline.run.env_vars);
  const auto cand_variables = storage::env_vars_of(candidate.run.env_vars);
  std::set<std::string> names;
  for (const auto& entry : base_variables) names.insert(entry.first);
  for (const auto& entry : cand_variables) names.insert(entry.first);
  for (const std::string& name : names) {
    const auto a = base_variables.find(name), b = cand_variables.find(name);
    const std::string a_text = a == base_variables.end() ? "" : a->second;
    const std::string b_text = b == cand_variables.end() ? "" : b->second;
    const bool both_set = a != base_variables.end() && b != cand_variables.end();
    if (a_text != b_text || !both_set) {
      differences.push_back({name.empty() ? "env_vars" : "env_vars." + name,
                             a == base_variables.end() ? "(unset)" : a_text,
                             b == cand_variables.end() ? "(unset)" : b_text, false});
    }
  }
  return differences;
}

}  // namespace attnsweep::compare
