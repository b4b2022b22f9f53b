#include "runner/plan/claims_match.hpp"

#include <algorithm>

namespace attnsweep {

std::vector<ClaimMatch> match_claims(const Config& config, const Plan& plan) {
  std::vector<ClaimMatch> matches;
  for (const ClaimedFigure& claim : config.claims) {
    const ClaimCase& wanted = claim.claimed_case;
    Config one;
    one.source_path = claim.path;
    one.seed = config.seed;
    one.variants = {wanted.variant};
    one.dtypes = {wanted.dtype};
    one.masks = {wanted.mask};
    one.score_mods = {wanted.scores};
    one.deterministic = {wanted.deterministic};
    one.passes = {wanted.pass};
    one.shapes = {wanted.shape};
    one.shapes_where = claim.where;
    ClaimMatch match{claim, {}, std::nullopt, ""};
    try {
      match.claimed = make_plan(one).cases.front();
    } catch (const BadInputError& error) {
      throw at_claim_case(claim, error);
    }
    const auto found = std::find_if(plan.cases.begin(), plan.cases.end(),
                                    [&](const Case& c) { return c.same_measurement(match.claimed); });
    if (found != plan.cases.end()) {
      match.plan_index = found->plan_index;
    } else if (std::find(config.variants.begin(), config.variants.end(), wanted.variant) == config.variants.end()) {
      match.unmatched_reason = "the config has no variant '" + wanted.variant + "'";
    } else {
      match.unmatched_reason = "the config's sweep has no case " + match.claimed.label() +
                               " (add its shape, dtype, mask and pass, or it is excluded)";
    }
    matches.push_back(std::move(match));
  }
  return matches;
}

}  // namespace attnsweep
