#include "runner/compare/comparison_report.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <sstream>

#include "runner/common/errors.hpp"
#include "runner/common/text.hpp"
#include "runner/report/escaping.hpp"
#include "runner/report/table.hpp"
#include "runner/report/writers.hpp"

namespace attnsweep::compare {
namespace {

using report::Cell;
using report::Column;
using report::Table;

std::string plural(int count, const std::string& one, const std::string& many) {
  return std::to_string(count) + " " + (count == 1 ? one : many);
}

// "results.db run 3 (nightly, done, started 2026-11-30T03:15:53Z, NVIDIA H200, git 1a2b3c4d5e6f)".
std::string run_line(const ComparedRun& compared) {
  const storage::RunRow& run = compared.run;
  std::vector<std::string> facts = {run.name, to_string(run.status), "started " + run.started_at};
  if (!run.device_name.empty()) facts.push_back(run.device_name);
  if (!run.git_sha.empty()) facts.push_back("git " + run.git_sha);
  return compared.path + " run " + std::to_string(run.run_id) + " (" + text::join(facts, ", ") + ")";
}

std::string shown(const std::string& value) { return value.empty() ? "-" : value; }

// The label of a finding's result: what it counts as.
std::string result_label(const Finding& finding, const CaseComparison& of_case) {
  switch (finding.severity) {
    case Severity::regression: return "REGRESSION";
    case Severity::improvement: return "IMPROVEMENT";
    case Severity::info: break;
  }
  return finding.check == Check::time && of_case.time.marked() ? "MARKED" : "note";
}

Table environment_table(const Comparison& comparison) {
  Table table;
  table.columns = {{"fact"}, {"baseline"}, {"candidate"}};
  for (const EnvironmentDifference& difference : comparison.environment) {
    table.add_row({Cell::text(difference.fact + (difference.breaks_timing ? " (!)" : "")),
                   Cell::text(shown(difference.baseline)), Cell::text(shown(difference.candidate))});
  }
  return table;
}

// One row per finding, case by case; at most `limit` rows (0: all).
Table findings_table(const Comparison& comparison, std::size_t limit) {
  Table table;
  table.columns = {{"case"}, {"check"}, {"field"}, {"baseline"}, {"candidate"}, {"result"}, {"detail"}};
  table.columns.back().max_width = 0;
  for (const CaseComparison& c : comparison.cases) {
    for (const Finding& finding : c.findings) {
      if (limit > 0 && table.rows.size() >= limit) return table;
      table.add_row({Cell::text(c.key.label()), Cell::text(to_string(finding.check)), Cell::text(finding.field),
                     Cell::text(shown(finding.baseline)), Cell::text(shown(finding.candidate)),
                     Cell::text(result_label(finding, c)), Cell::text(finding.detail)});
    }
  }
  return table;
}

int finding_count(const Comparison& comparison) {
  return comparison.regressions() + comparison.improvements() + comparison.notes();
}

int cases_with_findings(const Comparison& comparison) {
  return static_cast<int>(comparison.cases.size()) - comparison.same_cases();
}

// Every time verdict, then the findings of each check and severity that occur, then the cases.
Table counts_table(const Comparison& comparison) {
  Table table;
  table.columns = {{"what"}, {"count", "", report::Align::right}};
  for (const auto& [verdict, count] : comparison.verdict_counts()) {
    table.add_row({Cell::text(std::string("time ") + to_string(verdict)), Cell::integer(count)});
  }
  if (comparison.marked_cases() > 0) {
    table.add_row({Cell::text("time MARKED by a power or thermal cap"), Cell::integer(comparison.marked_cases())});
  }
  for (Check check : {Check::status, Check::counts, Check::backend, Check::numerics, Check::time}) {
    for (Severity severity : {Severity::regression, Severity::improvement, Severity::info}) {
      int count = 0;
      for (const CaseComparison& c : comparison.cases) {
        for (const Finding& f : c.findings) count += f.check == check && f.severity == severity ? 1 : 0;
      }
      if (count > 0) {
        table.add_row({Cell::text(std::string(to_string(check)) + " " + to_string(severity)), Cell::integer(count)});
      }
    }
  }
  table.add_row({Cell::text("cases matched"), Cell::integer(static_cast<std::int64_t>(comparison.cases.size()))});
  table.add_row({Cell::text("cases only in the baseline"),
                 Cell::integer(static_cast<std::int64_t>(comparison.only_in_baseline.size()))});
  table.add_row({Cell::text("cases only in the candidate"),
                 Cell::integer(static_cast<std::int64_t>(comparison.only_in_candidate.size()))});
  return table;
}

std::string settings_line(const CompareSettings& settings) {
  std::ostringstream line;
  line << "SAME under " << 100 * settings.threshold << "% or " << settings.min_change_us
       << " us change of the median; FASTER/SLOWER need a two-sided Mann-Whitney U p < " << settings.alpha << " and the p"
       << std::lround(100 * settings.shift_quantile)
       << " to move the same way beyond the threshold; AMBIGUOUS otherwise or under " << settings.min_kept_samples
       << " kept samples";
  return line.str();
}

std::string table_text(const Table& table, report::Format format) {
  std::ostringstream out;
  report::write_table(out, table, format);
  return out.str();
}

std::string labels(const std::vector<CaseKey>& keys) {
  std::string text;
  for (const CaseKey& key : keys) text += "  " + report::terminal_safe(key.label()) + "\n";
  return text;
}

// One line per case whose time could not be judged, with why; the label holds
// stored text (the variant's name), escaped for where it goes.
std::string unjudged_list(const Comparison& comparison, const std::string& bullet, bool markdown) {
  std::string text;
  for (const CaseComparison& c : comparison.cases) {
    if (c.unjudged.empty()) continue;
    const std::string line = c.key.label() + ": " + c.unjudged;
    text += bullet + (markdown ? report::markdown_inline(line) : report::terminal_safe(line)) + "\n";
  }
  return text;
}

std::string render_text(const Comparison& comparison) {
  std::ostringstream out;
  out << headline(comparison) << "\n";
  out << "baseline:  " << report::terminal_safe(run_line(comparison.baseline)) << "\n";
  out << "candidate: " << report::terminal_safe(run_line(comparison.candidate)) << "\n";
  for (const std::string& warning : comparison.warnings) out << "\nWARNING: " << report::terminal_safe(warning) << "\n";
  out << "\nEnvironment: ";
  if (comparison.environment.empty()) {
    out << "no difference\n";
  } else {
    out << plural(static_cast<int>(comparison.environment.size()), "fact differs", "facts differ")
        << " (informational, never a regression by itself)\n"
        << table_text(environment_table(comparison), report::Format::table);
  }
  out << "\nFindings: ";
  if (finding_count(comparison) == 0) {
    out << "none\n";
  } else {
    out << plural(finding_count(comparison), "finding", "findings") << " in "
        << plural(cases_with_findings(comparison), "case", "cases") << "\n"
        << table_text(findings_table(comparison, 0), report::Format::table);
  }
  if (comparison.unjudged_cases() > 0) {
    out << "\nNot judged (" << comparison.unjudged_cases() << "): no verdict on their time, so "
        << (comparison.inconclusive() ? "the comparison is INCONCLUSIVE" : "they do not count") << "\n"
        << unjudged_list(comparison, "  ", false);
  }
  if (!comparison.only_in_baseline.empty()) {
    out << "\nOnly in the baseline (" << comparison.only_in_baseline.size() << "):\n" << labels(comparison.only_in_baseline);
  }
  if (!comparison.only_in_candidate.empty()) {
    out << "\nOnly in the candidate (" << comparison.only_in_candidate.size() << "):\n"
        << labels(comparison.only_in_candidate);
  }
  out << "\nTime verdicts:";
  for (const auto& [verdict, count] : comparison.verdict_counts()) out << " " << to_string(verdict) << " " << count;
  out << " (" << settings_line(comparison.settings) << ")\n";
  return out.str();
}

std::string render_markdown(const Comparison& comparison) {
  std::ostringstream out;
  out << "### " << headline(comparison) << "\n\n";
  out << "Baseline " << report::markdown_inline(run_line(comparison.baseline)) << "  \nCandidate "
      << report::markdown_inline(run_line(comparison.candidate)) << "\n\n";
  if (!comparison.warnings.empty()) {
    out << "> [!WARNING]\n";
    for (const std::string& warning : comparison.warnings) out << "> " << report::markdown_inline(warning) << "  \n";
    out << "\n";
  }
  if (comparison.environment.empty()) {
    out << "**Environment**: no difference.\n\n";
  } else {
    out << "**Environment** (" << plural(static_cast<int>(comparison.environment.size()), "fact differs", "facts differ")
        << "; informational)\n\n"
        << table_text(environment_table(comparison), report::Format::markdown) << "\n";
  }
  const int findings = finding_count(comparison);
  if (findings == 0) {
    out << "**Findings**: none.\n\n";
  } else {
    out << "**Findings** (" << plural(findings, "finding", "findings") << " in "
        << plural(cases_with_findings(comparison), "case", "cases") << "; SAME cases left out)\n\n"
        << table_text(findings_table(comparison, kMarkdownFindingRows), report::Format::markdown);
    if (static_cast<std::size_t>(findings) > kMarkdownFindingRows) {
      out << "\n... and " << (static_cast<std::size_t>(findings) - kMarkdownFindingRows)
          << " more findings (--format json lists them all)\n";
    }
    out << "\n";
  }
  if (comparison.unjudged_cases() > 0) {
    out << "**Not judged** (" << comparison.unjudged_cases() << " cases; "
        << (comparison.inconclusive() ? "the comparison is **inconclusive**" : "not counted") << ")\n\n"
        << unjudged_list(comparison, "- ", true) << "\n";
  }
  for (const auto& [title, keys] : {std::make_pair("Only in the baseline", &comparison.only_in_baseline),
                                    std::make_pair("Only in the candidate", &comparison.only_in_candidate)}) {
    if (keys->empty()) continue;
    out << "<details><summary>" << title << " (" << keys->size() << ")</summary>\n\n";
    for (const CaseKey& key : *keys) out << "- " << report::markdown_inline(key.label()) << "\n";
    out << "\n</details>\n\n";
  }
  out << "<details><summary>Counts per verdict</summary>\n\n"
      << table_text(counts_table(comparison), report::Format::markdown) << "\n"
      << settings_line(comparison.settings) << ".\n\n</details>\n";
  return out.str();
}

// ---- JSON -----------------------------------------------------------------------

using Json = nlohmann::ordered_json;

Json optional_number(const std::optional<double>& value) {
  return value && std::isfinite(*value) ? Json(*value) : Json(nullptr);
}

Json key_json(const CaseKey& key) {
  return Json{{"label", key.label()},
              {"variant", key.variant},
              {"batch", key.shape.batch},
              {"heads", key.shape.heads},
              {"kv_heads", key.shape.kv_heads},
              {"seq_len_q", key.shape.seq_len_q},
              {"seq_len_kv", key.shape.seq_len_kv},
              {"head_dim", key.shape.head_dim},
              {"dtype", to_string(key.dtype)},
              {"causal", key.causal},
              {"pass", to_string(key.pass)},
              {"device", key.device_kind == DeviceKind::cuda ? "cuda" : "cpu"}};
}

Json run_json(const ComparedRun& compared) {
  const storage::RunRow& run = compared.run;
  return Json{{"path", compared.path},          {"run_id", run.run_id},         {"name", run.name},
              {"status", to_string(run.status)}, {"started_at", run.started_at}, {"device", run.device.to_string()},
              {"device_name", run.device_name},  {"git_sha", run.git_sha}};
}

Json time_json(const TimeComparison& time) {
  return Json{{"verdict", to_string(time.verdict)},
              {"baseline_median_us", optional_number(time.baseline_median_us)},
              {"candidate_median_us", optional_number(time.candidate_median_us)},
              {"baseline_samples", time.baseline_samples},
              {"candidate_samples", time.candidate_samples},
              {"ratio", optional_number(time.ratio)},
              {"p_value", optional_number(time.p_value)},
              {"quantile_ratio", optional_number(time.quantile_ratio)},
              {"reason", time.reason},
              {"marked", time.marked()},
              {"cap_mark", time.cap_mark},
              {"baseline_power_cap_share", optional_number(time.baseline_power_cap_share)},
              {"candidate_power_cap_share", optional_number(time.candidate_power_cap_share)},
              {"baseline_thermal_cap_share", optional_number(time.baseline_thermal_cap_share)},
              {"candidate_thermal_cap_share", optional_number(time.candidate_thermal_cap_share)}};
}

std::string render_json(const Comparison& comparison) {
  const CompareSettings& settings = comparison.settings;
  Json verdicts = Json::object();
  for (const auto& [verdict, count] : comparison.verdict_counts()) verdicts[to_string(verdict)] = count;
  Json environment = Json::array();
  for (const EnvironmentDifference& d : comparison.environment) {
    environment.push_back(
        Json{{"fact", d.fact}, {"baseline", d.baseline}, {"candidate", d.candidate}, {"breaks_timing", d.breaks_timing}});
  }
  Json cases = Json::array();
  for (const CaseComparison& c : comparison.cases) {
    Json findings = Json::array();
    for (const Finding& f : c.findings) {
      findings.push_back(Json{{"check", to_string(f.check)},
                              {"field", f.field},
                              {"severity", to_string(f.severity)},
                              {"baseline", f.baseline},
                              {"candidate", f.candidate},
                              {"detail", f.detail}});
    }
    cases.push_back(Json{{"key", key_json(c.key)},
                         {"baseline_case_id", c.baseline_case_id},
                         {"candidate_case_id", c.candidate_case_id},
                         {"baseline_status", to_string(c.baseline_status)},
                         {"candidate_status", to_string(c.candidate_status)},
                         {"same", c.same()},
                         {"time", time_json(c.time)},
                         {"not_judged", c.unjudged},
                         {"findings", findings}});
  }
  Json only_baseline = Json::array(), only_candidate = Json::array();
  for (const CaseKey& key : comparison.only_in_baseline) only_baseline.push_back(key_json(key));
  for (const CaseKey& key : comparison.only_in_candidate) only_candidate.push_back(key_json(key));
  const Json document{
      {"format", "attnsweep-compare/1"},
      {"headline", headline(comparison)},
      {"has_regression", comparison.has_regression()},
      {"summary",
       Json{{"regressions", comparison.regressions()},
            {"improvements", comparison.improvements()},
            {"notes", comparison.notes()},
            {"same", comparison.same_cases()},
            {"marked", comparison.marked_cases()},
            {"not_judged", comparison.unjudged_cases()},
            {"inconclusive", comparison.inconclusive()},
            {"matched_cases", comparison.cases.size()},
            {"only_in_baseline", comparison.only_in_baseline.size()},
            {"only_in_candidate", comparison.only_in_candidate.size()},
            {"time_verdicts", verdicts}}},
      {"baseline", run_json(comparison.baseline)},
      {"candidate", run_json(comparison.candidate)},
      {"settings",
       Json{{"threshold", settings.threshold},
            {"min_change_us", settings.min_change_us},
            {"shift_quantile", settings.shift_quantile},
            {"alpha", settings.alpha},
            {"min_kept_samples", settings.min_kept_samples},
            {"cap_share_difference", settings.cap_share_difference},
            {"numerics_worse_factor", settings.numerics_worse_factor},
            {"tolerances", Json{{"bf16", settings.bf16_tolerance},
                                {"fp16", settings.fp16_tolerance},
                                {"fp32", settings.fp32_tolerance}}}}},
      {"warnings", comparison.warnings},
      {"environment", environment},
      {"cases", cases},
      {"only_in_baseline", only_baseline},
      {"only_in_candidate", only_candidate}};
  // A path or a message need not be UTF-8 (a file name, an environment variable):
  // such bytes become U+FFFD rather than failing the whole document.
  return document.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace

const std::vector<std::string>& format_names() {
  static const std::vector<std::string> names = {"text", "markdown", "json"};  // indexed by Format
  return names;
}

Format parse_format(const std::string& name) {
  const std::vector<std::string>& names = format_names();
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) return static_cast<Format>(i);
  }
  throw BadInputError("--format: unknown format '" + name + "'; allowed: " + text::join(names, ", "));
}

std::string headline(const Comparison& comparison) {
  std::vector<std::string> parts = {plural(comparison.regressions(), "regression", "regressions"),
                                    plural(comparison.improvements(), "improvement", "improvements"),
                                    std::to_string(comparison.same_cases()) + " same"};
  const int ambiguous = comparison.verdict_counts().at(TimeVerdict::ambiguous);
  if (ambiguous > 0) parts.push_back(std::to_string(ambiguous) + " ambiguous");
  if (comparison.marked_cases() > 0) parts.push_back(std::to_string(comparison.marked_cases()) + " marked");
  if (comparison.unjudged_cases() > 0) {
    parts.push_back(std::to_string(comparison.unjudged_cases()) + " not judged" +
                    (comparison.inconclusive() ? " (INCONCLUSIVE)" : ""));
  }
  const std::size_t one_sided = comparison.only_in_baseline.size() + comparison.only_in_candidate.size();
  if (one_sided > 0) parts.push_back(std::to_string(one_sided) + " only in one run");
  return "attnsweep compare: " + text::join(parts, ", ");
}

std::string render(const Comparison& comparison, Format format) {
  switch (format) {
    case Format::text: return render_text(comparison);
    case Format::markdown: return render_markdown(comparison);
    case Format::json: return render_json(comparison);
  }
  return render_text(comparison);
}

}  // namespace attnsweep::compare
