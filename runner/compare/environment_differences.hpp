#pragma once
// The run-level facts that differ between two runs (docs/compare.md,
// "Environment"): the machine and software, how each run measured, and its
// environment variables key by key. Informational, never a regression: they
// say why times may differ; the two that make times unlike (timing_protocol,
// measure_regime) are marked for a loud warning. The GPU's facts (the regime,
// power limit, clocks) are left out where either run is on the CPU.
#include <string>
#include <vector>

#include "runner/compare/run_cases.hpp"

namespace attnsweep::compare {

// A run-level fact (a runs column, or one key of env_vars) that differs.
struct EnvironmentDifference {
  std::string fact;  // the column name, or env_vars.NAME
  std::string baseline, candidate;  // "" when absent (NULL, or the variable unset)
  // The times of the two runs are not like with like (timing_protocol, measure_regime:
  // storage::MovesTimes::unlike).
  bool breaks_timing = false;
};

// In the order reported: the runs columns marked as facts where they are
// declared (storage::run_facts(): the machine and software first, then how it
// measured, the protocol settings), then env_vars. measure_regime,
// burst_cooldown_max_ms, power_limit_w, the clocks, temperature and clock event
// reasons at the start only where both runs are on a GPU.
std::vector<EnvironmentDifference> environment_differences(const ComparedRun& baseline, const ComparedRun& candidate);

}  // namespace attnsweep::compare
