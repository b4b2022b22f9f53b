#include "runner/report/summary_table.hpp"

#include <cstdio>

namespace attnsweep::report {
namespace {

// A per-forward count; "5?" when the profiled forwards disagreed.
Cell count_cell(const storage::CaseRow& row, const std::optional<int>& count) {
  if (!count) return Cell::null();
  if (row.counts_consistent.value_or(true)) return Cell::integer(*count);
  return Cell::text(std::to_string(*count) + "?");
}

Cell scientific(const std::optional<double>& value) {
  if (!value) return Cell::null();
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1e", *value);
  return Cell::text(buffer);
}

Cell real_or_null(const std::optional<double>& value, int digits) {
  return value ? Cell::real(*value, digits) : Cell::null();
}

}  // namespace

Table summary_table(const std::vector<storage::CaseRow>& cases) {
  Table table;
  table.columns = {{"variant"},
                   {"shape"},
                   {"dtype"},
                   {"causal"},
                   {"status"},
                   {"kernels", "", Align::right},
                   {"memcpy", "", Align::right},
                   {"memset", "", Align::right},
                   {"median_us", "us", Align::right},
                   {"TFLOP/s", "TFLOP/s", Align::right},
                   {"rel_err", "", Align::right}};
  for (const auto& row : cases) {
    const Case& c = row.identity;
    const bool ok = row.status == CaseStatus::ok;
    table.add_row({Cell::text(c.variant), Cell::text(c.shape.label()), Cell::text(to_string(c.dtype)),
                   Cell::text(c.causal ? "yes" : "no"), Cell::text(to_string(row.status)),
                   count_cell(row, row.kernels_per_forward), count_cell(row, row.memcpy_per_forward),
                   count_cell(row, row.memset_per_forward), ok ? real_or_null(row.median_us(), 1) : Cell::null(),
                   ok ? real_or_null(row.tflops, 2) : Cell::null(), ok ? scientific(row.rel_error) : Cell::null()});
  }
  return table;
}

}  // namespace attnsweep::report
