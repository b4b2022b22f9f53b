#pragma once
// Which case of one run is which case of the other: by CaseKey, a key
// measured twice pairing in plan order. Apart from the checks because the
// rule is compare's promise to its readers (docs/compare.md, "What is
// compared"): a case found in one run only is listed, never a regression.
#include <cstddef>
#include <utility>
#include <vector>

#include "runner/compare/run_cases.hpp"

namespace attnsweep::compare {

struct CaseMatches {
  std::vector<std::pair<std::size_t, std::size_t>> pairs;  // (baseline, candidate) indexes, in the baseline's order
  std::vector<std::size_t> only_in_baseline, only_in_candidate;  // indexes, each in its run's order
};

CaseMatches match_cases(const std::vector<ComparedCase>& baseline, const std::vector<ComparedCase>& candidate);

}  // namespace attnsweep::compare
