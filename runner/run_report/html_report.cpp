#include "runner/run_report/html_report.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <variant>

#include "report_assets.hpp"
#include "runner/report/axis_json.hpp"
#include "runner/report/escaping.hpp"
#include "version.hpp"

namespace attnsweep::run_report {
namespace {

using nlohmann::json;

template <typename T>
json optional_json(const std::optional<T>& value) {
  return value ? json(*value) : json(nullptr);
}

// A stored value as JSON: null for NULL.
json stored_json(const storage::Value& value) {
  if (const auto* integer = std::get_if<std::int64_t>(&value)) return *integer;
  if (const auto* real = std::get_if<double>(&value)) return *real;
  if (const auto* text = std::get_if<std::string>(&value)) return *text;
  return nullptr;
}

// The report's keys that show a stored column (report.js reads them by key),
// and whether only an `ok` case shows it (a failed case's partial time is not a result).
struct StoredKey {
  const char* key;
  const char* column;
  bool ok_only;
};
const StoredKey kStoredKeys[] = {
    {"kernels", "kernels_per_forward", false},  {"memcpy", "memcpy_per_forward", false},
    {"memset", "memset_per_forward", false},
    {"time_us", "time_us_median", true},        {"dispatch_us", "cpu_dispatch_us_median", false},
    {"tflops", "tflops", true},                 {"gbps", "bandwidth_gbps", false},
    {"rel_error", "rel_error", false},          {"grad_rel_error", "grad_rel_error_max", false},
    {"numerics", "numerics", false},            {"validity", "validity", false},
    {"validity_reasons", "validity_reasons", false}, {"other_processes", "other_processes", false},
    {"samples", "samples", false},              {"power_cap_share", "power_cap_share", false},
    {"energy_j", "energy_j", true},             {"energy_power_w", "energy_power_w", true},
    {"tflop_per_joule", "tflop_per_joule", true},
    // Hardware counters (measure.counters, issue 39); counters_why_not where asked but not read.
    {"dram_read_bytes", "dram_read_bytes", true}, {"dram_write_bytes", "dram_write_bytes", true},
    {"l2_hit_rate", "l2_hit_rate", true},         {"sm_throughput", "sm_throughput", true},
    {"tensor_pipe", "tensor_pipe", true},         {"counters_why_not", "counters_why_not", false},
};

json kernel_json(const KernelStat& k) {
  return {{"name", k.name},
          {"kind", k.kind},
          {"launches", k.launches_per_forward},
          {"total_us", k.total_us},
          {"mean_us", k.mean_us},
          {"grid", k.grid},
          {"block", k.block},
          {"registers", optional_json(k.registers_per_thread)},
          {"shared_memory", optional_json(k.shared_memory_bytes)},
          {"blocks_per_sm", optional_json(k.blocks_per_sm)},
          {"warps_per_sm", optional_json(k.warps_per_sm)},
          {"occupancy", optional_json(k.est_occupancy_pct)},
          {"dram_read_bytes", optional_json(k.dram_read_bytes)},
          {"dram_write_bytes", optional_json(k.dram_write_bytes)},
          {"l2_hit_rate", optional_json(k.l2_hit_rate)},
          {"sm_throughput", optional_json(k.sm_throughput)},
          {"tensor_pipe", optional_json(k.tensor_pipe)}};
}

json case_json(const ReportCase& c, int index) {
  const storage::CaseRow& r = c.row;
  const Shape& s = r.identity.shape;
  json kernels = json::array();
  for (const auto& k : c.kernels) kernels.push_back(kernel_json(k));
  json findings = json::array();
  if (c.previous) {
    for (const auto& f : c.previous->findings) {
      findings.push_back({{"check", compare::to_string(f.check)},
                          {"severity", compare::to_string(f.severity)},
                          {"baseline", f.baseline},
                          {"candidate", f.candidate},
                          {"detail", f.detail}});
    }
  }
  json out = {{"index", index},
          {"plan_index", r.identity.plan_index},
          {"shape", s.label()},
          // A variable-length batch ("varlen[q 1, kv 512-32768]", else "") and the queries
          // that are not padding: shapes apart, tokens right.
          {"varlen", s.varlen_label()},
          {"tokens", s.query_tokens()},
          {"causal", r.identity.mask.is_causal()},
          {"mask_label", r.identity.mask_label()},  // with a score modification: "causal softcap30"
          {"device", r.device.to_string()},
          {"status", to_string(r.status)},
          {"error", r.error_message},
          {"backend", r.sdpa_backend},
          {"consistent", optional_json(r.counts_consistent)},  // true or false, not the stored 1 or 0
          {"tflops_share", optional_json(c.tflops_share)},
          {"ai", r.min_bytes > 0 ? json(r.flops / r.min_bytes) : json(nullptr)},
          // The same intensity by the bytes the counters saw move through DRAM (issue 39).
          {"ai_measured", r.dram_read_bytes && r.dram_write_bytes && *r.dram_read_bytes + *r.dram_write_bytes > 0
                              ? json(r.flops / (*r.dram_read_bytes + *r.dram_write_bytes))
                              : json(nullptr)},
          {"grad_rel_errors", {optional_json(r.grad_rel_error_q), optional_json(r.grad_rel_error_k), optional_json(r.grad_rel_error_v)}},
          {"backend_backward", r.sdpa_backend_backward},
          {"vs_naive", optional_json(c.speedup_over_naive)},
          {"vs_previous", optional_json(c.speedup_over_previous)},
          {"verdict", c.previous ? json(compare::to_string(c.previous->time.verdict)) : json(nullptr)},
          {"findings", findings},
          {"trace", c.trace_link},
          {"trace_exists", c.trace_exists},
          {"kernel_rows", kernels}};
  // Every axis of the case under its name (runner/plan/case_axes.hpp): variant, batch, heads,
  // kv_heads, seq_len_q, seq_len_kv, head_dim, dtype, mask, ..., head_dim_v (the values'), pass.
  report::put_axes(out, r.identity);
  const bool ok = r.status == CaseStatus::ok;
  for (const StoredKey& stored : kStoredKeys) {
    out[stored.key] = stored.ok_only && !ok ? json(nullptr) : stored_json(storage::case_value(r, stored.column).value);
  }
  return out;
}

json comparison_json(const compare::Comparison& comparison) {
  json environment = json::array();
  for (const auto& d : comparison.environment) {
    environment.push_back({{"fact", d.fact}, {"baseline", d.baseline}, {"candidate", d.candidate}});
  }
  json verdicts = json::object();
  for (const auto& [verdict, count] : comparison.verdict_counts()) verdicts[compare::to_string(verdict)] = count;
  json only_in_baseline = json::array(), only_in_candidate = json::array();
  for (const auto& key : comparison.only_in_baseline) only_in_baseline.push_back(key.label());
  for (const auto& key : comparison.only_in_candidate) only_in_candidate.push_back(key.label());
  const storage::RunRow& baseline = comparison.baseline.run;
  return {{"baseline",
           {{"path", comparison.baseline.path},
            {"run_id", baseline.run_id},
            {"name", baseline.name},
            {"started_at", baseline.started_at}}},
          {"regressions", comparison.regressions()},
          {"improvements", comparison.improvements()},
          {"same", comparison.same_cases()},
          {"verdicts", verdicts},
          {"environment", environment},
          {"warnings", comparison.warnings},
          {"only_in_baseline", only_in_baseline},
          {"only_in_candidate", only_in_candidate}};
}

json report_json(const RunReport& report) {
  const storage::RunRow& run = report.run;
  json cases = json::array();
  for (std::size_t i = 0; i < report.cases.size(); ++i) cases.push_back(case_json(report.cases[i], static_cast<int>(i)));
  json environment = json::array();
  for (const auto& [key, value] : report.environment) environment.push_back({key, value});
  json passes = json::array();
  for (const Pass pass : report.passes()) passes.push_back(to_string(pass));
  return {{"meta",
           {{"version", kVersion},
            {"generated_at", report.generated_at},
            {"db", report.db_path},
            {"trace_url_base", report.trace_url_base}}},
          {"run",
           {{"run_id", run.run_id},
            {"name", run.name},
            {"status", to_string(run.status)},
            {"device", run.device.to_string()},
            {"device_name", run.device_name},
            {"cpu", run.device.kind() == DeviceKind::cpu},
            {"started_at", run.started_at},
            {"finished_at", run.finished_at},
            {"planned_cases", run.planned_cases}}},
          {"environment", environment},
          {"ceilings", {{"tflops", optional_json(report.ceiling_tflops)}, {"gbps", optional_json(report.ceiling_gbps)}}},
          {"compare", report.comparison ? comparison_json(*report.comparison) : json(nullptr)},
          {"passes", passes},
          {"cases", cases}};
}

// A table drawn here, not by the script (the claims and the backend choice,
// issue 37): static HTML, every cell escaped, its control characters shown as
// the terminal shows them ("\x1b"): a claims file's text is stored as given.
std::string static_table(const report::Table& table) {
  const auto shown = [](const std::string& text) { return report::html_text(report::terminal_safe(text)); };
  std::string html = "<div class=\"table-wrap\"><table><thead><tr>";
  for (const auto& column : table.columns) html += "<th>" + shown(column.name) + "</th>";
  html += "</tr></thead><tbody>";
  for (const auto& row : table.rows) {
    html += "<tr>";
    for (const auto& cell : row) html += "<td>" + shown(cell.is_null() ? "-" : cell.to_text()) + "</td>";
    html += "</tr>";
  }
  return html + "</tbody></table></div>";
}

}  // namespace

void write_html_report(std::ostream& out, const RunReport& report) {
  const bool on_cpu = report.run.device.kind() == DeviceKind::cpu;
  // Passes other than forward: the script adds a pass selector to the bar, and
  // the notes speak of passes; a forward-only run reads word for word as it always did.
  const bool several_passes = report.by_pass();
  const std::string per = several_passes ? "pass" : "forward";
  // The energy charts, only where a case has energy: a run without reads as it always did.
  const bool energy = report.has_energy();
  const std::string energy_section =
      !energy ? ""
              : "<section id=\"charts-energy\"><h2>Energy per " + per + "</h2><p class=\"note\">Joules per " + per +
                    " from NVML's energy counter, read between two of its steps over a window of " +
                    (several_passes ? "passes" : "forwards") +
                    " run back to back after the samples (measure.energy_window_ms, in the run's regime; "
                    "docs/measurement.md, \"Energy\"), and the FLOPs of the " + per +
                    " over its energy: TFLOP per joule. The counter is the whole GPU's and coarse: differences under "
                    "10% are within its noise (docs/compare.md)." +
                    (several_passes ? " Backward cases have none: each needs an untimed forward the counter cannot "
                                      "tell apart."
                                    : "") +
                    "</p><div class=\"charts\" id=\"energy-charts\"></div></section>\n";
  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      << "<meta name=\"generator\" content=\"attnsweep " << kVersion << "\">\n"
      << "<title>attnsweep: " << report::html_text(report.run.name) << " (run " << report.run.run_id << ")</title>\n"
      << "<style>\n" << embedded::report_css << "</style>\n</head>\n<body>\n"
      << "<header id=\"header\"></header>\n<nav>"
      << "<a href=\"#charts-time\">Time</a><a href=\"#charts-speedup\">Speed-up</a>"
      << "<a href=\"#charts-roofline\">Roofline</a>" << (energy ? "<a href=\"#charts-energy\">Energy</a>" : "")
      << "<a href=\"#charts-kernels\">Kernels</a>"
      << (report.comparison ? "<a href=\"#comparison\">Compared</a>" : "")
      << "<a href=\"#results\">Results</a>" << (report.choices.empty() ? "" : "<a href=\"#choice\">Backend choice</a>")
      << (report.claims.empty() ? "" : "<a href=\"#claims\">Claims</a>") << "<a href=\"#failures\">Unsupported and failed</a>"
      << "<a href=\"#environment\">Environment</a></nav>\n<main>\n"
      << "<noscript><p>The tables and charts of this report are drawn by its embedded script; "
         "`attnsweep report --format markdown` writes the tables as text.</p></noscript>\n"
      << "<section id=\"charts-time\"><h2>Time against sequence length</h2><p class=\"note\">One chart per dtype "
         "and head_dim, log scales; dashed lines are the unmasked (full) cases where both masks were run; "
         "sdpa_auto, which is the backend PyTorch chose, is drawn as open rings over that backend's line.</p>"
         "<div class=\"charts\" id=\"time-charts\"></div></section>\n"
      << "<section id=\"charts-speedup\"><h2>Speed-up</h2><div class=\"charts\" id=\"speedup-charts\"></div>"
         "</section>\n"
      << "<section id=\"charts-roofline\"><h2>Roofline</h2><p class=\"note\">Achieved TFLOP/s against arithmetic "
      << (several_passes ? "intensity (FLOPs of the pass, a backward counted as 2.5 forwards and a forward_backward as 3.5 "
                           "as FlashAttention counts them, over the minimum bytes it must move, docs/schema.md "
                           "flop_convention). "
                         : "intensity (FLOPs over the minimum bytes a forward must move, docs/schema.md flop_convention). ")
      << "The roof is the bf16 matmul and copy ceilings measured at run start; fp32 and fp16 are drawn against the same "
         "roof. Where the run read hardware counters (measure.counters), hollow triangles place the same cases by the "
         "bytes they moved through DRAM: left of the dot, a case moved more than the minimum.</p>"
         "<div class=\"charts\" id=\"roofline-charts\"></div></section>\n"
      << energy_section
      << "<section id=\"charts-kernels\"><h2>Kernels per " << per << "</h2><div class=\"charts\" id=\"kernel-charts\">"
         "</div></section>\n"
      << "<section id=\"comparison\"><h2>Compared with the previous run</h2></section>\n"
      << "<section id=\"results\"><h2>Results</h2><p class=\"note\">One row per case: launches per " << per
      << " from the profiler (a ? marks counts that differed between profiled " << (several_passes ? "passes" : "forwards")
      << "), the median " << (on_cpu ? "wall time per " + per + " on the CPU" : "GPU time per " + per + " from CUDA events")
      << ", the host time for the " << per << " call to return (CPU dispatch), achieved TFLOP/s and its share of the "
         "measured bf16 matmul ceiling, the relative error against a float64 reference, "
      << (several_passes ? "for backward passes the worst relative error of dq, dk and dv against float64 autograd "
                           "(grad error) and the backend PyTorch chose for the backward, and the speed-up over naive "
                           "attention on the same shape, dtype, mask and pass."
                         : "and the speed-up over naive attention on the same shape, dtype and mask.")
      << "</p></section>\n"
      << (report.choices.empty()
              ? ""
              : "<section id=\"choice\"><h2>Which backend to pick</h2><p class=\"note\">Per case group, the fastest "
                "variant (sdpa_auto left out: it runs one of the others), its lead over the runner-up (significant "
                "when the medians' 95% confidence intervals are apart) and PyTorch's own choice against it (the "
                "choice view, docs/schema.md).</p>" + static_table(compare::choice_table(report.choices)) + "</section>\n")
      << (report.claims.empty()
              ? ""
              : "<section id=\"claims\"><h2>Claims</h2><p class=\"note\">Each published figure of the config's "
                "claims files against this run's measurement of its case: the ratio is measured over claimed "
                "performance (by time where the claim gives one, else TFLOP/s; above 1 is faster), reproduced within "
                "5%; the differences are what could explain a gap (docs/config.md, Claims).</p>" +
                    static_table(compare::claims_table(report.claims)) + "</section>\n")
      << "<section id=\"failures\"><h2>Unsupported and failed cases</h2></section>\n"
      << "<section id=\"environment\"><h2>Environment</h2><p class=\"note\">What the run recorded about where it ran "
         "(docs/schema.md, runs). Ceilings were measured on this GPU when the run started.</p></section>\n</main>\n"
      << "<footer id=\"footer\"></footer>\n"
      << "<script type=\"application/json\" id=\"report-data\">" << report::json_in_script(report_json(report).dump(-1, ' ', false, json::error_handler_t::replace))
      << "</script>\n<script>\n" << embedded::chart_js << "\n</script>\n<script>\n" << embedded::report_js
      << "</script>\n</body>\n</html>\n";
}

}  // namespace attnsweep::run_report
