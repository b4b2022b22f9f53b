#include "runner/report/summary_table.hpp"

#include "runner/report/case_cells.hpp"

namespace attnsweep::report {

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
                   {"rel_err", "", Align::right},
                   {"numerics"}};
  for (const auto& row : cases) {
    const Case& c = row.identity;
    const bool ok = row.status == CaseStatus::ok;
    table.add_row({Cell::text(c.variant), Cell::text(c.shape.label()), Cell::text(to_string(c.dtype)),
                   Cell::text(c.causal ? "yes" : "no"), Cell::text(to_string(row.status)),
                   count_cell(row, row.kernels_per_forward), count_cell(row, row.memcpy_per_forward),
                   count_cell(row, row.memset_per_forward), ok ? real_or_null(row.median_us(), 1) : Cell::null(),
                   ok ? real_or_null(row.tflops, 2) : Cell::null(), ok ? scientific_cell(row.rel_error) : Cell::null(),
                   row.numerics.empty() ? Cell::null() : Cell::text(row.numerics)});
  }
  return table;
}

}  // namespace attnsweep::report
