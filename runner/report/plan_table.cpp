#include "runner/report/plan_table.hpp"

#include <algorithm>

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

}  // namespace

// The pass column shows only when a case times something other than the
// forward, so a forward-only plan (every config before issue 23) reads as before.
// Likewise the lengths of variable-length batches (seq_len_q and seq_len_kv are
// then their longest), the page size of paged caches and the values' head dim
// where a case's differs from its head_dim.
Table plan_table(const Plan& plan, const Device& device) {
  const bool show_pass =
      std::any_of(plan.cases.begin(), plan.cases.end(), [](const Case& c) { return c.pass != Pass::forward; });
  const bool show_lengths =
      std::any_of(plan.cases.begin(), plan.cases.end(), [](const Case& c) { return c.shape.variable_length(); });
  const bool show_pages =
      std::any_of(plan.cases.begin(), plan.cases.end(), [](const Case& c) { return c.shape.page_size > 0; });
  const bool show_value_dims = std::any_of(plan.cases.begin(), plan.cases.end(),
                                           [](const Case& c) { return c.shape.value_dim() != c.shape.head_dim; });
  Table table;
  table.columns = {{"#", "", Align::right},
                   {"variant"},
                   {"batch", "", Align::right},
                   {"heads", "", Align::right},
                   {"kv_heads", "", Align::right},
                   {"seq_len_q", "", Align::right},
                   {"seq_len_kv", "", Align::right},
                   {"head_dim", "", Align::right},
                   {"dtype"},
                   {"mask"}};
  if (show_lengths) {
    table.columns.push_back({"seq_lens_q"});
    table.columns.push_back({"seq_lens_kv"});
  }
  if (show_pages) table.columns.push_back({"page_size", "", Align::right});
  if (show_value_dims) table.columns.push_back({"head_dim_v", "", Align::right});
  if (show_pass) table.columns.push_back({"pass"});
  table.columns.push_back({"note", "", Align::left, ""});
  for (const Case& c : plan.cases) {
    const VariantInfo* info = find_variant_info(c.variant);
    const bool runs = info && variant_runs_on(*info, device);
    std::vector<Cell> row = {Cell::integer(c.plan_index),      Cell::text(c.variant),
                             Cell::integer(c.shape.batch),     Cell::integer(c.shape.heads),
                             Cell::integer(c.shape.kv_heads),  Cell::integer(c.shape.seq_len_q),
                             Cell::integer(c.shape.seq_len_kv), Cell::integer(c.shape.head_dim),
                             Cell::text(to_string(c.dtype)),   Cell::text(c.mask_label())};
    if (show_lengths) {
      row.push_back(c.shape.variable_length() ? Cell::text(lengths_text(c.shape.seq_lens_q)) : Cell::null());
      row.push_back(c.shape.variable_length() ? Cell::text(lengths_text(c.shape.seq_lens_kv)) : Cell::null());
    }
    if (show_pages) row.push_back(Cell::integer(c.shape.page_size));
    if (show_value_dims) row.push_back(Cell::integer(c.shape.value_dim()));
    if (show_pass) row.push_back(Cell::text(to_string(c.pass)));
    const std::string note = plan_note(c, runs, device);
    row.push_back(note.empty() ? Cell::null() : Cell::text(note));
    table.add_row(row);
  }
  return table;
}

}  // namespace attnsweep::report
