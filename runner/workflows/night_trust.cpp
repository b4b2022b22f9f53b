#include "runner/workflows/night_trust.hpp"

#include <cmath>

#include "runner/common/text.hpp"
#include "runner/storage/run_facts.hpp"

namespace attnsweep::workflows {

bool moves_times(const compare::EnvironmentDifference& difference) {
  return storage::moves_times(difference.fact) != storage::MovesTimes::no;
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
