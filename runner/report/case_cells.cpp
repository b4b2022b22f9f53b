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

std::vector<std::string> validity_codes(const std::string& reasons) {
  std::vector<std::string> codes;
  std::size_t start = 0;
  while (start < reasons.size()) {
    std::size_t end = reasons.find("; ", start);
    if (end == std::string::npos) end = reasons.size();
    const std::string reason = reasons.substr(start, end - start);
    codes.push_back(reason.substr(0, reason.find(':')));
    start = end + 2;
  }
  return codes;
}

std::string validity_text(const storage::CaseRow& row) {
  if (row.validity != "suspect") return row.validity;
  std::string text = "suspect:";
  const auto codes = validity_codes(row.validity_reasons);
  for (std::size_t i = 0; i < codes.size(); ++i) text += (i ? "," : " ") + codes[i];
  return text;
}

}  // namespace attnsweep::report
