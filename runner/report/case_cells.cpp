#include "runner/report/case_cells.hpp"

#include <cstdio>
#include <string>
#include <variant>

namespace attnsweep::report {
namespace {

Cell printed(const char* format, int digits, double value) {
  char buffer[48];
  std::snprintf(buffer, sizeof buffer, format, digits, value);
  return Cell::text(buffer);
}

}  // namespace

Cell shown_cell(const storage::Shown& shown) {
  using Style = storage::Display::Style;
  const storage::Display& display = shown.display;
  if (const auto* integer = std::get_if<std::int64_t>(&shown.value)) return Cell::integer(*integer);
  if (const auto* text = std::get_if<std::string>(&shown.value)) return Cell::text(*text);
  const auto* real = std::get_if<double>(&shown.value);
  if (!real) return Cell::null();
  switch (display.style) {
    case Style::fixed: return Cell::real(*real, display.digits);
    case Style::scientific: return printed("%.*e", display.digits, *real);
    case Style::significant: return printed("%.*g", display.digits, *real);
    case Style::as_is: break;
  }
  return Cell::real(*real, -1);
}

Cell stored_cell(const storage::CaseRow& row, const std::string& column) {
  return shown_cell(storage::case_value(row, column));
}

Cell count_cell(const storage::CaseRow& row, const std::optional<int>& count) {
  if (!count) return Cell::null();
  if (row.counts_consistent.value_or(true)) return Cell::integer(*count);
  return Cell::text(std::to_string(*count) + "?");
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
