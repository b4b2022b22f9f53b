#include "runner/report/variants_table.hpp"

#include "runner/variants/variant_names.hpp"

namespace attnsweep::report {

Table variants_table(const Device& device) {
  Table table;
  table.columns = {{"variant"}, {"cpu"}, {"cuda"}, {"runs here"}, {"description", "", Align::left, "-", 0}};
  auto yes_no = [](bool value) { return Cell::text(value ? "yes" : "no"); };
  for (const auto& info : variant_catalog()) {
    table.add_row({Cell::text(info.name), yes_no(info.runs_on_cpu), yes_no(info.runs_on_cuda),
                   yes_no(variant_runs_on(info, device)), Cell::text(info.description)});
  }
  return table;
}

}  // namespace attnsweep::report
