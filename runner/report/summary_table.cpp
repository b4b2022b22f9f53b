#include "runner/report/summary_table.hpp"

#include <algorithm>

#include "runner/report/case_cells.hpp"

namespace attnsweep::report {

// A run with backward passes gains a pass column after the mask and the worst
// gradient error after rel_err; a forward-only run's table is what it always was.
Table summary_table(const std::vector<storage::CaseRow>& cases) {
  const bool passes = std::any_of(cases.begin(), cases.end(),
                                  [](const storage::CaseRow& row) { return row.identity.pass != Pass::forward; });
  Table table;
  table.columns = {{"variant"}, {"shape"}, {"dtype"}, {"mask"}};
  if (passes) table.columns.push_back({"pass"});
  for (auto column : std::initializer_list<Column>{{"status"},
                                                   {"kernels", "", Align::right},
                                                   {"memcpy", "", Align::right},
                                                   {"memset", "", Align::right},
                                                   {"median_us", "us", Align::right},
                                                   {"TFLOP/s", "TFLOP/s", Align::right},
                                                   {"rel_err", "", Align::right}}) {
    table.columns.push_back(column);
  }
  if (passes) table.columns.push_back({"grad_err", "", Align::right});
  table.columns.push_back({"numerics"});
  table.columns.push_back({"validity"});
  for (const auto& row : cases) {
    const Case& c = row.identity;
    const bool ok = row.status == CaseStatus::ok;
    std::vector<Cell> cells = {Cell::text(c.variant), Cell::text(c.shape.label()), Cell::text(to_string(c.dtype)),
                               Cell::text(c.mask_label())};
    if (passes) cells.push_back(Cell::text(to_string(c.pass)));
    for (auto cell : {Cell::text(to_string(row.status)), count_cell(row, row.kernels_per_forward),
                      count_cell(row, row.memcpy_per_forward), count_cell(row, row.memset_per_forward),
                      ok ? stored_cell(row, "time_us_median") : Cell::null(),
                      ok ? stored_cell(row, "tflops") : Cell::null(),
                      ok ? stored_cell(row, "rel_error") : Cell::null()}) {
      cells.push_back(cell);
    }
    if (passes) cells.push_back(ok ? stored_cell(row, "grad_rel_error_max") : Cell::null());
    cells.push_back(stored_cell(row, "numerics"));
    cells.push_back(row.validity.empty() ? Cell::null() : Cell::text(validity_text(row)));
    table.add_row(std::move(cells));
  }
  return table;
}

}  // namespace attnsweep::report
