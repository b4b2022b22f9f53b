#pragma once
// The compact table printed at the end of a run (stdout).
#include <ostream>
#include <utility>
#include <vector>

#include "runner/measure/case_result.hpp"
#include "runner/plan/case.hpp"

namespace attnsweep {

void print_summary_table(std::ostream& out, const std::vector<std::pair<Case, CaseResult>>& rows);

// One line per case as it finishes (stderr log).
std::string one_line_result(const Case& c, const CaseResult& result);

}  // namespace attnsweep
