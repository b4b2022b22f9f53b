#pragma once
// The first line of every rendering of a Comparison (text, markdown and JSON
// alike): how many cases regressed, improved and stayed the same.
#include <string>

#include "runner/compare/compare_runs.hpp"

namespace attnsweep::compare {

// "attnsweep compare: 2 regressions, 1 improvement, 140 same" (and the
// ambiguous, marked, noted and one-sided cases when there are any).
std::string headline(const Comparison& comparison);

// "1 regression", "2 regressions": a count and its noun, as the reports write them.
std::string plural(int count, const std::string& one, const std::string& many);

}  // namespace attnsweep::compare
