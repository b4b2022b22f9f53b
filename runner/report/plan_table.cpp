#include "runner/report/plan_table.hpp"

#include "runner/variants/variant_names.hpp"

namespace attnsweep::report {

Table plan_table(const Plan& plan, const Device& device) {
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
                   {"causal"},
                   {"note", "", Align::left, ""}};
  for (const Case& c : plan.cases) {
    const VariantInfo* info = find_variant_info(c.variant);
    const bool runs = info && variant_runs_on(*info, device);
    table.add_row({Cell::integer(c.plan_index), Cell::text(c.variant), Cell::integer(c.shape.batch),
                   Cell::integer(c.shape.heads), Cell::integer(c.shape.kv_heads), Cell::integer(c.shape.seq_len_q),
                   Cell::integer(c.shape.seq_len_kv), Cell::integer(c.shape.head_dim), Cell::text(to_string(c.dtype)),
                   Cell::text(c.causal ? "yes" : "no"),
                   runs ? Cell::null() : Cell::text("unsupported on " + device.to_string())});
  }
  return table;
}

}  // namespace attnsweep::report
