#include "runner/run_report/markdown_report.hpp"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "runner/report/case_cells.hpp"
#include "runner/report/escaping.hpp"
#include "runner/report/writers.hpp"

namespace attnsweep::run_report {
namespace {

using report::Align;
using report::Cell;
using report::count_cell;
using report::stored_cell;
using report::Table;

Cell times(const std::optional<double>& value) {
  if (!value) return Cell::null();
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, *value < 10 ? "%.2fx" : "%.1fx", *value);
  return Cell::text(buffer);
}

Cell percent(const std::optional<double>& value) {
  if (!value) return Cell::null();
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f%%", 100 * *value);
  return Cell::text(buffer);
}

// Text from the database in a heading or a line (report/escaping.hpp); the
// table writer escapes its cells itself.
std::string inline_text(const std::string& text) { return report::markdown_inline(text); }

// At most 300 bytes, cut between two UTF-8 characters (a table cell: the writer escapes it).
std::string at_most_300_bytes(const std::string& text) {
  if (text.size() <= 300) return text;
  std::size_t cut = 297;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return text.substr(0, cut) + "...";
}

// Leaves out the columns no row has a value in (kernel counts and ceilings on a CPU run).
Table without_empty_columns(const Table& table) {
  Table kept;
  std::vector<std::size_t> columns;
  for (std::size_t i = 0; i < table.columns.size(); ++i) {
    for (const auto& row : table.rows) {
      if (!row[i].is_null()) {
        columns.push_back(i);
        break;
      }
    }
  }
  for (const std::size_t i : columns) kept.columns.push_back(table.columns[i]);
  for (const auto& row : table.rows) {
    std::vector<Cell> cells;
    for (const std::size_t i : columns) cells.push_back(row[i]);
    kept.add_row(std::move(cells));
  }
  return kept;
}

Table environment_table(const RunReport& r) {
  Table table;
  table.columns = {{"fact"}, {"value"}};
  table.columns[1].max_width = 0;
  for (const auto& [key, value] : r.environment) table.add_row({Cell::text(key), Cell::text(value)});
  return table;
}

// The cases of one pass, or all of them (`pass` empty); with `pass_column` a
// column names each row's pass.
Table results_table(const RunReport& r, std::optional<Pass> pass, bool pass_column) {
  const bool cpu = r.run.device.kind() == DeviceKind::cpu;
  Table table;
  table.columns = {{"variant"}, {"shape"}, {"dtype"}, {"mask"}};
  if (pass_column) table.columns.push_back({"pass"});
  const std::vector<report::Column> measured = {
      {"status"},
      {"kernels", "", Align::right},
      {"memcpy", "", Align::right},
      {"memset", "", Align::right},
      {cpu ? "CPU time" : "GPU time", "us", Align::right},
      {"CPU dispatch", "us", Align::right},
      {"TFLOP/s", "", Align::right},
      {"of ceiling", "", Align::right},
      {"energy", "J", Align::right},
      {"TFLOP/J", "", Align::right},
      {"rel. error", "", Align::right},
      {"grad error", "", Align::right},
      {"numerics"},
      {"validity"},
      {"backward backend"},
      {"vs naive", "", Align::right}};
  table.columns.insert(table.columns.end(), measured.begin(), measured.end());
  if (r.comparison) {
    table.columns.push_back({"vs previous", "", Align::right});
    table.columns.push_back({"verdict"});
  }
  for (const ReportCase& c : r.cases) {
    const storage::CaseRow& row = c.row;
    if (pass && row.identity.pass != *pass) continue;
    const bool ok = row.status == CaseStatus::ok;
    std::vector<Cell> cells = {Cell::text(row.identity.variant), Cell::text(row.identity.shape.label()),
                               Cell::text(to_string(row.identity.dtype)),
                               Cell::text(row.identity.mask_label())};
    if (pass_column) cells.push_back(Cell::text(to_string(row.identity.pass)));
    const std::vector<Cell> values = {
        Cell::text(to_string(row.status)),
        count_cell(row, row.kernels_per_forward),
        count_cell(row, row.memcpy_per_forward),
        count_cell(row, row.memset_per_forward),
        ok ? stored_cell(row, "time_us_median") : Cell::null(),
        ok ? stored_cell(row, "cpu_dispatch_us_median") : Cell::null(),
        ok ? stored_cell(row, "tflops") : Cell::null(),
        ok ? percent(c.tflops_share) : Cell::null(),
        ok ? stored_cell(row, "energy_j") : Cell::null(),
        ok ? stored_cell(row, "tflop_per_joule") : Cell::null(),
        ok ? stored_cell(row, "rel_error") : Cell::null(),
        ok ? stored_cell(row, "grad_rel_error_max") : Cell::null(),
        stored_cell(row, "numerics"),
        row.validity.empty() ? Cell::null() : Cell::text(report::validity_text(row)),
        stored_cell(row, "sdpa_backend_backward"),
        times(c.speedup_over_naive)};
    cells.insert(cells.end(), values.begin(), values.end());
    if (r.comparison) {
      cells.push_back(times(c.speedup_over_previous));
      cells.push_back(c.previous ? Cell::text(compare::to_string(c.previous->time.verdict)) : Cell::null());
    }
    table.add_row(std::move(cells));
  }
  return table;
}

Table failures_table(const RunReport& r, bool pass_column) {
  Table table;
  table.columns = {{"variant"}, {"shape"}, {"dtype"}, {"mask"}};
  if (pass_column) table.columns.push_back({"pass"});
  table.columns.push_back({"status"});
  table.columns.push_back({"reason"});
  table.columns.back().max_width = 0;
  for (const ReportCase& c : r.cases) {
    const storage::CaseRow& row = c.row;
    if (row.status == CaseStatus::ok) continue;
    std::vector<Cell> cells = {Cell::text(row.identity.variant), Cell::text(row.identity.shape.label()),
                               Cell::text(to_string(row.identity.dtype)),
                               Cell::text(row.identity.mask_label())};
    if (pass_column) cells.push_back(Cell::text(to_string(row.identity.pass)));
    cells.push_back(Cell::text(to_string(row.status)));
    cells.push_back(Cell::text(at_most_300_bytes(row.error_message)));
    table.add_row(std::move(cells));
  }
  return table;
}

Cell megabytes(const std::optional<double>& bytes) {
  if (!bytes) return Cell::null();
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.2f", *bytes / 1e6);
  return Cell::text(buffer);
}

bool has_counters(const storage::CaseRow& row) {
  return row.dram_read_bytes || row.l2_hit_rate || row.sm_throughput || row.tensor_pipe || !row.counters_why_not.empty();
}

// Why no case read its counters, where that is one reason for all that asked (a CPU
// run: "hardware counters are read on a CUDA device only ..."); "" where any case read
// some, or the reasons differ (each then has its row).
std::string counters_not_read(const RunReport& r) {
  std::string reason;
  for (const ReportCase& c : r.cases) {
    const storage::CaseRow& row = c.row;
    if (!has_counters(row)) continue;
    if (row.dram_read_bytes || row.dram_write_bytes || row.l2_hit_rate || row.sm_throughput || row.tensor_pipe) return "";
    if (!reason.empty() && row.counters_why_not != reason) return "";
    reason = row.counters_why_not;
  }
  return reason;
}

// The hardware counters of each case that asked for them (measure.counters, issue 39):
// the DRAM bytes of a pass against the minimum it must move, the bandwidth they make
// over the median time and its share of the copy ceiling of the GPU that ran it, and the shares.
Table counters_table(const RunReport& r, bool pass_column) {
  Table table;
  table.columns = {{"variant"}, {"shape"}, {"dtype"}, {"mask"}};
  if (pass_column) table.columns.push_back({"pass"});
  const std::vector<report::Column> columns = {
      {"DRAM read", "MB", Align::right},   {"DRAM written", "MB", Align::right}, {"bytes / minimum", "", Align::right},
      {"DRAM", "GB/s", Align::right},      {"of copy ceiling", "", Align::right}, {"L2 hits", "", Align::right},
      {"SM busy", "", Align::right},       {"tensor pipe", "", Align::right},     {"counter pass", "s", Align::right},
      {"not read because"}};
  table.columns.insert(table.columns.end(), columns.begin(), columns.end());
  table.columns.back().max_width = 0;
  for (const ReportCase& c : r.cases) {
    const storage::CaseRow& row = c.row;
    if (!has_counters(row)) continue;
    std::vector<Cell> cells = {Cell::text(row.identity.variant), Cell::text(row.identity.shape.label()),
                               Cell::text(to_string(row.identity.dtype)), Cell::text(row.identity.mask_label())};
    if (pass_column) cells.push_back(Cell::text(to_string(row.identity.pass)));
    std::optional<double> moved, over_min, gbps, share;
    if (row.dram_read_bytes && row.dram_write_bytes) moved = *row.dram_read_bytes + *row.dram_write_bytes;
    if (moved && row.min_bytes > 0) over_min = *moved / row.min_bytes;
    const std::optional<double> time_us = row.derived.time_us_median;
    if (moved && time_us && *time_us > 0 && row.status == CaseStatus::ok) gbps = *moved / (*time_us * 1e3);
    if (gbps) share = c.dram_share;  // of the ceiling of the GPU that ran the case (a --gpus run has one each)
    char ratio[32] = "";
    if (over_min) std::snprintf(ratio, sizeof ratio, "%.2fx", *over_min);
    char rate[32] = "";
    if (gbps) std::snprintf(rate, sizeof rate, "%.0f", *gbps);
    const std::vector<Cell> values = {megabytes(row.dram_read_bytes),
                                      megabytes(row.dram_write_bytes),
                                      over_min ? Cell::text(ratio) : Cell::null(),
                                      gbps ? Cell::text(rate) : Cell::null(),
                                      percent(share),
                                      percent(row.l2_hit_rate),
                                      percent(row.sm_throughput),
                                      percent(row.tensor_pipe),
                                      stored_cell(row, "counter_seconds"),
                                      row.counters_why_not.empty() ? Cell::null() : Cell::text(at_most_300_bytes(row.counters_why_not))};
    cells.insert(cells.end(), values.begin(), values.end());
    table.add_row(std::move(cells));
  }
  return table;
}

// What the energy columns mean, for a table that has them.
std::string energy_legend(bool several_passes) {
  const std::string per = several_passes ? "pass" : "forward";
  return " energy: joules per " + per + " from NVML's energy counter over a window of " + per +
         (several_passes ? "es" : "s") +
         " run back to back (measure.energy_window_ms; docs/measurement.md, \"Energy\"; coarse: differences under 10% "
         "are noise); TFLOP/J: the " + per + "'s FLOPs over it.";
}

// What the columns of one pass's table mean.
std::string results_legend(Pass pass, bool several_passes) {
  if (!several_passes) {
    return "kernels, memcpy, memset: launches per forward (? when the profiled forwards differed); time: median per "
           "forward; of ceiling: share of the bf16 matmul ceiling measured at run start; vs naive: naive's time over "
           "this one's on the same shape, dtype and mask.";
  }
  const std::string per = pass == Pass::forward_backward ? "forward+backward" : to_string(pass);
  std::string legend = "kernels, memcpy, memset: launches per " + per + " (? when the profiled passes differed); time: median per " +
                       per + (pass == Pass::backward ? ", each timed after an untimed forward" : "") +
                       "; TFLOP/s: " +
                       (pass == Pass::forward ? std::string("the forward's FLOPs")
                                              : std::string(pass == Pass::backward ? "2.5" : "3.5") + " times the forward's FLOPs (FlashAttention's convention)") +
                       " over the time; of ceiling: share of the bf16 matmul ceiling measured at run start; ";
  if (pass != Pass::forward) {
    legend += "grad error: the worst relative error of dq, dk and dv against float64 autograd; backward backend: the "
              "SDPA backend that ran the backward; ";
  }
  return legend + "vs naive: naive's time over this one's on the same shape, dtype, mask and pass.";
}

}  // namespace

void write_markdown_report(std::ostream& out, const RunReport& r) {
  const storage::RunRow& run = r.run;
  out << "# attnsweep report: " << inline_text(run.name) << ", run " << run.run_id << "\n\n"
      << inline_text(run.device_name.empty() ? run.device.to_string() : run.device_name) << ", " << to_string(run.status)
      << ", started " << inline_text(run.started_at)
      << (run.finished_at.empty() ? "" : ", finished " + inline_text(run.finished_at)) << ". "
      << r.cases.size() << " of " << run.planned_cases << " cases: " << r.count(CaseStatus::ok) << " ok, "
      << r.count(CaseStatus::unsupported) << " unsupported, " << r.failed() << " failed. From " << inline_text(r.db_path)
      << ".\n\n## Environment\n\n";
  report::write_table(out, environment_table(r), report::Format::markdown);
  // One section per pass when any is not a forward; a forward-only run's reads as it always did.
  const std::vector<Pass> passes = r.passes();
  const bool several_passes = r.by_pass();
  if (!several_passes) {
    out << "\n## Results\n\n";
    if (r.cases.empty()) {
      out << "No case of this run is stored.\n";
    } else {
      report::write_table(out, without_empty_columns(results_table(r, std::nullopt, false)), report::Format::markdown);
    }
    out << "\n" << results_legend(Pass::forward, false) << (r.has_energy() ? energy_legend(false) : "") << "\n";
  }
  if (several_passes) {
    for (const Pass pass : passes) {
      out << "\n## Results: " << to_string(pass) << "\n\n";
      report::write_table(out, without_empty_columns(results_table(r, pass, true)), report::Format::markdown);
      const bool energy = std::any_of(r.cases.begin(), r.cases.end(), [&](const ReportCase& c) {
        return c.row.identity.pass == pass && c.row.energy_j.has_value();
      });
      out << "\n" << results_legend(pass, true) << (energy ? energy_legend(true) : "") << "\n";
    }
  }
  if (r.comparison) {
    const compare::Comparison& c = *r.comparison;
    out << "\n## Compared with run " << c.baseline.run.run_id << " of " << inline_text(c.baseline.path) << "\n\n"
        << c.regressions() << " regressions, " << c.improvements() << " improvements, " << c.same_cases()
        << " cases the same";
    for (const auto& [verdict, n] : c.verdict_counts()) {
      if (n > 0) out << ", " << n << " " << compare::to_string(verdict);
    }
    out << " (`attnsweep compare` lists every finding).\n";
    for (const auto& warning : c.warnings) out << "\n**" << inline_text(warning) << "**\n";
  }
  if (!r.choices.empty()) {
    out << "\n## Which backend to pick\n\n";
    report::write_table(out, compare::choice_table(r.choices), report::Format::markdown);
    out << "\nPer case group, the fastest variant of the ok cases (sdpa_auto left out: it runs one of the others), "
           "its lead over the runner-up (significant when the medians' 95% confidence intervals are apart, else a "
           "tie), and PyTorch's own choice against it (the `choice` view, docs/schema.md).\n";
  }
  if (!r.claims.empty()) {
    out << "\n## Claims\n\n";
    report::write_table(out, compare::claims_table(r.claims), report::Format::markdown);
    out << "\nEach published figure of the config's claims files against this run's measurement of its case "
           "(the `claims` table and `claim_results` view, docs/config.md \"Claims\"): the ratio is measured over "
           "claimed performance (by time where the claim gives one, else by TFLOP/s; above 1 is faster), reproduced "
           "within 5%; the differences are what could explain a gap.\n";
  }
  if (const std::string reason = counters_not_read(r); !reason.empty()) {
    // One reason for every case (on the CPU: none is read there): said once, not once per case.
    const auto asked = std::count_if(r.cases.begin(), r.cases.end(), [](const ReportCase& c) { return has_counters(c.row); });
    out << "\n## Hardware counters\n\nNot read for "
        << (asked == 1 ? std::string("the one case") : "any of the " + std::to_string(asked) + " cases")
        << " that asked: " << report::markdown_inline(reason) << ".\n";
  } else if (std::any_of(r.cases.begin(), r.cases.end(), [](const ReportCase& c) { return has_counters(c.row); })) {
    out << "\n## Hardware counters\n\n";
    report::write_table(out, without_empty_columns(counters_table(r, several_passes)), report::Format::markdown);
    out << "\nOne more pass of each case under CUPTI's range profiler after its timed samples (measure.counters; "
           "docs/measurement.md, \"Counters\"), never timed: DRAM bytes read and written by its kernels (L2 is "
           "write-back: what a pass leaves dirty in L2 is not yet written), their sum over the minimum bytes the pass "
           "must move (min_bytes; a forward's: q, k, v read once, the output written once: 1.00x is a kernel that moves "
           "nothing more), the "
           "bandwidth that sum makes over the median time and its share of the copy ceiling measured at run start on the GPU that ran the case; "
           "L2 hits: the kernels' hit rates weighted by the sectors they moved through L2; SM busy and tensor pipe: shares of their peak, weighted by "
           "kernel time.\n";
  }
  const Table failures = failures_table(r, several_passes);
  out << "\n## Unsupported and failed cases\n\n";
  const int not_stored = static_cast<int>(run.planned_cases) - static_cast<int>(r.cases.size());
  if (failures.rows.empty()) {
    out << (not_stored > 0 ? "No stored case failed.\n" : "Every case ran.\n");
  } else {
    report::write_table(out, failures, report::Format::markdown);
  }
  if (not_stored > 0) {
    out << "\n" << not_stored << " of the " << run.planned_cases << " planned cases are not in the database (the run is "
        << to_string(run.status) << ").\n";
  }
}

}  // namespace attnsweep::run_report
