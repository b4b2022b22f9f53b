#include "runner/compare/comparison_headline.hpp"

#include <vector>

#include "runner/common/text.hpp"

namespace attnsweep::compare {

std::string plural(int count, const std::string& one, const std::string& many) {
  return std::to_string(count) + " " + (count == 1 ? one : many);
}

std::string headline(const Comparison& comparison) {
  std::vector<std::string> parts = {plural(comparison.regressions(), "regression", "regressions"),
                                    plural(comparison.improvements(), "improvement", "improvements"),
                                    std::to_string(comparison.same_cases()) + " same"};
  const int ambiguous = comparison.verdict_counts().at(TimeVerdict::ambiguous);
  if (ambiguous > 0) parts.push_back(std::to_string(ambiguous) + " ambiguous");
  const int suspect = comparison.verdict_counts().at(TimeVerdict::suspect);
  if (suspect > 0) parts.push_back(std::to_string(suspect) + " suspect (time not judged)");
  if (comparison.marked_cases() > 0) parts.push_back(std::to_string(comparison.marked_cases()) + " marked");
  if (comparison.unjudged_cases() > 0) {
    parts.push_back(std::to_string(comparison.unjudged_cases()) + " not judged" +
                    (comparison.inconclusive() ? " (INCONCLUSIVE)" : ""));
  }
  const std::size_t one_sided = comparison.only_in_baseline.size() + comparison.only_in_candidate.size();
  if (one_sided > 0) parts.push_back(std::to_string(one_sided) + " only in one run");
  return "attnsweep compare: " + text::join(parts, ", ");
}

}  // namespace attnsweep::compare
