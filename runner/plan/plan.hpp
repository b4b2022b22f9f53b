#pragma once
// Config -> the ordered list of cases (product of axes, zipped rows, exclusions).
#include <vector>

#include "runner/config/config.hpp"
#include "runner/plan/case.hpp"

namespace attnsweep {

struct Plan {
  std::vector<Case> cases;
  int excluded = 0;    // cases removed by exclude rules
  int duplicates = 0;  // cases listed twice by overlapping shape blocks, kept once
};

// Throws ConfigError for impossible shapes (kv_heads must divide heads) and for
// an empty sweep.
Plan make_plan(const Config& config);

// The order in which the cases run: the plan's own (all variants of a shape and
// dtype back to back) or, with measure.case_order = shuffled, a permutation
// drawn from `seed` (the same every time, so --resume and workers agree).
// plan_index stays the case's identity either way.
std::vector<Case> execution_order(const Plan& plan, CaseOrder case_order, std::uint64_t seed);

}  // namespace attnsweep
