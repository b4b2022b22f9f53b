#pragma once
// Cells of a stored case, as every table of cases shows them: the run's
// summary and the report's markdown.
#include <optional>
#include <string>
#include <vector>

#include "runner/report/table.hpp"
#include "runner/storage/run_reader.hpp"

namespace attnsweep::report {

// The stored column `column` of the case (the cases table's columns, and the
// derived ones: time_us_median, tflop_per_joule, grad_rel_error_max), shown
// with the column's digits (storage::case_value); null when NULL.
Cell stored_cell(const storage::CaseRow& row, const std::string& column);
// A stored value with its display: fixed decimals, "2.0e-03", "0.0125".
Cell shown_cell(const storage::Shown& shown);
// A launch count per forward; "5?" when the profiled forwards disagreed; null when unknown.
Cell count_cell(const storage::CaseRow& row, const std::optional<int>& count);
// The validity label as tables show it: "ok", or "suspect: power_capped,few_samples"
// (CaseRow::validity_codes); empty when the case was not judged.
std::string validity_text(const storage::CaseRow& row);

}  // namespace attnsweep::report
