#include "runner/report/case_cells.hpp"

#include <cstdio>
#include <string>

namespace attnsweep::report {

Cell count_cell(const storage::CaseRow& row, const std::optional<int>& count) {
  if (!count) return Cell::null();
  if (row.counts_consistent.value_or(true)) return Cell::integer(*count);
  return Cell::text(std::to_string(*count) + "?");
}

Cell scientific_cell(const std::optional<double>& value) {
  if (!value) return Cell::null();
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1e", *value);
  return Cell::text(buffer);
}

Cell real_or_null(const std::optional<double>& value, int digits) {
  return value ? Cell::real(*value, digits) : Cell::null();
}

}  // namespace attnsweep::report

namespace attnsweep::report {

std::string validity_text(const storage::CaseRow& row) {
  if (row.validity != "suspect") return row.validity;
  std::string text = "suspect:";
  const auto codes = row.validity_codes();
  for (std::size_t i = 0; i < codes.size(); ++i) text += (i ? "," : " ") + codes[i];
  return text;
}

}  // namespace attnsweep::report
