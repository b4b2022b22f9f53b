#pragma once
// The run-level facts compare reports when two runs differ in them (docs/compare.md,
// "Environment"): the runs columns marked as facts where they are declared
// (run_columns.cpp), in that order, each with its stored value as text, and
// which of them move times (compare's warning, nightly's trust).
#include <functional>
#include <string>
#include <vector>

#include "runner/storage/fact_role.hpp"
#include "runner/storage/run_row.hpp"

namespace attnsweep::storage {

struct RunFact {
  std::string name;  // the runs column
  FactRole role;
  // The value as stored, as text: a whole number in decimal, a real in its
  // shortest faithful form (%.15g), "" for NULL.
  std::function<std::string(const RunRow&)> text;
};

// The machine and software first, then how the run measured, then its protocol settings.
const std::vector<RunFact>& run_facts();

// How a change of `fact` bears on times: a runs column as run_facts() names it,
// or "env_vars.NAME", one environment variable (the allocator, TF32 and launch
// blocking move times). MovesTimes::no for any other name.
MovesTimes moves_times(const std::string& fact);

}  // namespace attnsweep::storage
