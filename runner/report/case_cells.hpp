#pragma once
// Cells of a stored case, as every table of cases shows them: the run's
// summary and the report's markdown.
#include <optional>
#include <string>
#include <vector>

#include "runner/report/table.hpp"
#include "storage/run_reader.hpp"

namespace attnsweep::report {

// A launch count per forward; "5?" when the profiled forwards disagreed; null when unknown.
Cell count_cell(const storage::CaseRow& row, const std::optional<int>& count);
// "2.0e-03"-style text (one decimal); null when unknown.
Cell scientific_cell(const std::optional<double>& value);
// A real with `digits` decimals; null when unknown.
Cell real_or_null(const std::optional<double>& value, int digits);
// The validity label as tables show it: "ok", or "suspect: power_capped,few_samples"
// (CaseRow::validity_codes); empty when the case was not judged.
std::string validity_text(const storage::CaseRow& row);

}  // namespace attnsweep::report
