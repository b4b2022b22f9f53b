#pragma once
// A config's claims (runner/config/claims.hpp) matched to the cases of its plan:
// a claim's case is planned as a one-case config would be (so its mask takes its
// canonical form as the plan's do), then found among the plan's cases by
// Case::same_measurement. No LibTorch.
#include <optional>
#include <string>
#include <vector>

#include "runner/config/config.hpp"
#include "runner/plan/plan.hpp"

namespace attnsweep {

struct ClaimMatch {
  ClaimedFigure claim;
  Case claimed;                    // the claim's case, planned
  std::optional<int> plan_index;   // the plan's case of the same measurement
  std::string unmatched_reason;    // why none: empty when matched
};

// Throws ConfigError where a claim's case cannot be planned (kv_heads that do
// not divide heads, a query row that sees no key), at the claim (file:line:column,
// claims[i].case...). `run` calls it before the database is opened.
std::vector<ClaimMatch> match_claims(const Config& config, const Plan& plan);

}  // namespace attnsweep
