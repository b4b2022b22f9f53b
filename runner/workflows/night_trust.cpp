#include "runner/workflows/night_trust.hpp"

#include <cmath>

#include "runner/common/text.hpp"

namespace attnsweep::workflows {

bool moves_times(const compare::EnvironmentDifference& difference) {
  if (difference.breaks_timing) return true;
  const std::string& fact = difference.fact;
  for (const char* exact : {"power_limit_w", "sm_clock_max_mhz", "env_vars.PYTORCH_NO_CUDA_MEMORY_CACHING",
                            "env_vars.PYTORCH_CUDA_ALLOC_CONF", "env_vars.CUDA_LAUNCH_BLOCKING",
                            "env_vars.NVIDIA_TF32_OVERRIDE"}) {
    if (fact == exact) return true;
  }
  return fact.rfind("env_vars.TORCH_ALLOW_TF32", 0) == 0;
}

NightTrust night_trust(const compare::Comparison& comparison) {
  NightTrust trust;
  for (const compare::EnvironmentDifference& difference : comparison.environment) {
    if (!moves_times(difference)) continue;
    const auto shown = [](const std::string& value) { return value.empty() ? std::string("(unset)") : value; };
    trust.reasons.push_back("the environment changed in a fact that moves times: " + difference.fact + " " +
                            shown(difference.baseline) + " -> " + shown(difference.candidate));
  }
  for (const compare::CaseComparison& c : comparison.cases) {
    if (!c.timed_on_both_sides() || !c.ignored.empty()) continue;  // an ignored case is not asked to be judged
    ++trust.timed;
    // NOT_TIMED though timed on both sides is no verdict (issue 55, item 4).
    const bool verdict = c.time.verdict != compare::TimeVerdict::suspect && c.time.verdict != compare::TimeVerdict::not_timed;
    if (verdict && c.unjudged.empty()) ++trust.judged;
  }
  if (trust.timed > 0 && trust.judged < kMinJudgedShare * trust.timed) {
    trust.reasons.push_back("only " + std::to_string(trust.judged) + " of the " + std::to_string(trust.timed) +
                            " cases timed on both nights could be judged on time (under " +
                            text::fixed(100 * kMinJudgedShare, 0) + "%; the rest suspect or not judged)");
  }
  return trust;
}

}  // namespace attnsweep::workflows
