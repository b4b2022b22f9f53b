#pragma once
// A measured case as the row it is stored as: where a CaseResult's facts
// become columns (counts per forward, the eager sample count, the precision
// of the reported median, the joined warnings and validity reasons). The one
// place measuring's types meet the stored record; the store writes what it
// returns through case_columns().
#include <cstdint>
#include <optional>
#include <string>

#include "runner/measure/case_result.hpp"
#include "runner/plan/case.hpp"
#include "runner/storage/case_row.hpp"

namespace attnsweep::storage {

// What the store adds to the case: its run, when it finished, the run's shard
// and the trace path as stored (relative to the run's trace_path_base).
struct CaseContext {
  std::int64_t run_id = 0;
  std::string finished_at;
  std::optional<int> shard_index;
  std::string trace_path;
};

CaseRow case_record(const Case& identity, const CaseResult& result, const CaseContext& context);

}  // namespace attnsweep::storage
