#include "runner/report/plan_table.hpp"

#include <algorithm>
#include <functional>
#include <variant>

#include "runner/plan/case_axes.hpp"
#include "runner/variants/op_library_spec.hpp"
#include "runner/variants/variant_names.hpp"

namespace attnsweep::report {
namespace {

// What `run` will find unsupported without running anything: a variant with no
// implementation for the device; a backward of a paged case;
// a built-in variant on a paged cache (docs/config.md). Empty when it runs.
std::string plan_note(const Case& c, bool runs, const Device& device) {
  if (!runs) return "unsupported on " + device.to_string();
  if (c.pass != Pass::forward && c.shape.forward_only()) {
    return "unsupported: paged cases are forward only";
  }
  if (c.pass != Pass::forward && is_fp8(c.dtype)) return "unsupported: fp8 cases are forward only";
  if (c.shape.page_size > 0 && !find_op_library_spec(c.variant)) return "unsupported: no built-in variant reads pages";
  return "";
}

// An axis's value as a cell: a number, a word, a list of lengths ("512,3000"; none: NULL).
Cell axis_cell(const AxisValue& value) {
  if (const auto* number = std::get_if<std::int64_t>(&value)) return Cell::integer(*number);
  if (const auto* lengths = std::get_if<std::vector<std::int64_t>>(&value)) {
    return lengths->empty() ? Cell::null() : Cell::text(axis_text(value));
  }
  if (std::holds_alternative<std::monostate>(value)) return Cell::null();
  return Cell::text(axis_text(value));
}

}  // namespace

// A column per axis of the case (runner/plan/case_axes.hpp), in the axes' order;
// the mask part (the mask, score modifications, determinism) is one "mask" column
// (Case::mask_label). An axis with a default (variable lengths, the page size,
// the values' head dim, the pass) has its column only where some case is off it,
// so a forward-only, uniform plan (every config before issue 23) reads as before.
Table plan_table(const Plan& plan, const Device& device) {
  Table table;
  table.columns = {{"#", "", Align::right}};
  std::vector<std::function<Cell(const Case&)>> cells = {[](const Case& c) { return Cell::integer(c.plan_index); }};
  bool mask_column = false;
  for (const CaseAxis& axis : case_axes()) {
    if (axis.part == LabelPart::mask) {
      if (!mask_column) {
        table.columns.push_back({"mask"});
        cells.push_back([](const Case& c) { return Cell::text(c.mask_label()); });
      }
      mask_column = true;
      continue;
    }
    if (axis.at_default && std::all_of(plan.cases.begin(), plan.cases.end(), axis.at_default)) continue;
    table.columns.push_back(axis.whole_number ? Column{axis.name, "", Align::right} : Column{axis.name});
    cells.push_back([&axis](const Case& c) { return axis_cell(axis.value(c)); });
  }
  table.columns.push_back({"note", "", Align::left, ""});
  for (const Case& c : plan.cases) {
    const VariantInfo* info = find_variant_info(c.variant);
    const bool runs = info && variant_runs_on(*info, device);
    std::vector<Cell> row;
    for (const auto& cell : cells) row.push_back(cell(c));
    const std::string note = plan_note(c, runs, device);
    row.push_back(note.empty() ? Cell::null() : Cell::text(note));
    table.add_row(row);
  }
  return table;
}

}  // namespace attnsweep::report
