#pragma once
// The table printed at the end of a run: one row per stored case, read back
// from the database, so a resumed run shows every case, old and new.
#include <vector>

#include "runner/report/table.hpp"
#include "runner/storage/run_reader.hpp"

namespace attnsweep::report {

Table summary_table(const std::vector<storage::CaseRow>& cases);

}  // namespace attnsweep::report
