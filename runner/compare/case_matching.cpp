#include "runner/compare/case_matching.hpp"

#include <deque>
#include <map>

namespace attnsweep::compare {

CaseMatches match_cases(const std::vector<ComparedCase>& baseline, const std::vector<ComparedCase>& candidate) {
  CaseMatches matches;
  // Candidate cases by key, each key's in plan order (a key measured twice pairs in order).
  std::map<CaseKey, std::deque<std::size_t>> unmatched;
  for (std::size_t i = 0; i < candidate.size(); ++i) unmatched[candidate[i].key].push_back(i);
  std::vector<bool> matched(candidate.size(), false);
  for (std::size_t b = 0; b < baseline.size(); ++b) {
    auto found = unmatched.find(baseline[b].key);
    if (found == unmatched.end() || found->second.empty()) {
      matches.only_in_baseline.push_back(b);
      continue;
    }
    const std::size_t index = found->second.front();
    found->second.pop_front();
    matched[index] = true;
    matches.pairs.emplace_back(b, index);
  }
  for (std::size_t i = 0; i < candidate.size(); ++i) {
    if (!matched[i]) matches.only_in_candidate.push_back(i);
  }
  return matches;
}

}  // namespace attnsweep::compare
