#pragma once
// One run as compare reads it, read once: its row, and each case's row with its
// kept eager samples. A comparison is made of two of these; nightly reads each
// good night into one and keys its window by it, history one per night. So no
// caller reads a night's cases or samples twice, and the numbers the window
// judges are those compare judged.
#include <cstdint>
#include <string>
#include <vector>

#include "runner/compare/case_key.hpp"
#include "runner/storage/run_reader.hpp"

namespace attnsweep::compare {

// A run as the comparison names it.
struct ComparedRun {
  std::string path;
  storage::RunRow run;
};

// One stored case, with what its time is judged on.
struct ComparedCase {
  CaseKey key;
  storage::CaseRow row;
  std::vector<double> kept_us;  // kept eager samples (kept_eager_times_us); empty unless the case is ok
};

struct RunCases {
  ComparedRun run;
  std::vector<ComparedCase> cases;  // in plan order
  // Where the kernels of a changed case are read from (kernel differences):
  // the reader these were read through, which must outlive them.
  const storage::RunReader* reader = nullptr;
};

// Run `run_id` of `reader` with its cases. Throws BadInputError when the run is not there.
RunCases read_run_cases(const storage::RunReader& reader, std::int64_t run_id);
// The same for rows already read (a sweep's outcome holds its run's rows): only the samples are read.
RunCases read_run_cases(const storage::RunReader& reader, std::int64_t run_id, std::vector<storage::CaseRow> rows);

}  // namespace attnsweep::compare
