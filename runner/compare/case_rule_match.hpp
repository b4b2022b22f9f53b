#pragma once
// Whether a case (its key) matches a pattern of runner/common/case_rules.hpp.
#include "runner/common/case_rules.hpp"
#include "runner/compare/case_key.hpp"

namespace attnsweep::compare {

bool matches(const CasePattern& pattern, const CaseKey& key);

}  // namespace attnsweep::compare
