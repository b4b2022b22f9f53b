#pragma once
// One line per case as it finishes, for the log (stderr): the result still in
// memory, before anyone reads it back from the database.
#include <string>

#include "runner/measure/case_result.hpp"
#include "runner/plan/case.hpp"

namespace attnsweep::report {

std::string one_line_result(const Case& c, const CaseResult& result);

}  // namespace attnsweep::report
