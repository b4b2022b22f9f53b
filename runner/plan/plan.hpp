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

}  // namespace attnsweep
