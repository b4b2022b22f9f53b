#include "runner/compare/comparison_report.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "runner/common/errors.hpp"
#include "runner/common/text.hpp"
#include "runner/compare/comparison_headline.hpp"
#include "runner/compare/comparison_json.hpp"
#include "runner/report/escaping.hpp"
#include "runner/report/table.hpp"
#include "runner/report/writers.hpp"

namespace attnsweep::compare {
namespace {

using report::Cell;
using report::Column;
using report::Table;

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
  for (Check check : checks()) {
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
       << " kept samples; SUSPECT (not judged) where either side's validity label is suspect";
  return line.str();
}

std::string table_text(const Table& table, report::Format format) {
  std::ostringstream out;
  report::write_table(out, table, format);
  return out.str();
}

// ---- kernel differences ----------------------------------------------------------

std::string number_text(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.6g", value);
  return buffer;
}

std::string share_text(double share) { return text::fixed(100 * share, 1) + "%"; }

std::string kib_text(std::int64_t bytes) { return text::fixed(static_cast<double>(bytes) / 1024, 1); }

// One aspect's cell: "a -> b" when both sides have it and `always` or it
// differs, the one value otherwise ("-" when none).
template <typename Value>
std::string aspect_cell(const KernelDifference& d, const std::optional<Value> KernelSide::*member,
                        std::string (*shown_as)(Value), bool differs) {
  const auto value_of = [&](const std::optional<KernelSide>& side) -> std::string {
    if (!side || !(*side.*member)) return "-";
    return shown_as(*(*side.*member));
  };
  if (d.baseline && d.candidate) {
    return differs ? value_of(d.baseline) + " -> " + value_of(d.candidate) : value_of(d.candidate);
  }
  return value_of(d.baseline ? d.baseline : d.candidate);
}

std::string text_cell(const KernelDifference& d, const std::string KernelSide::*member, bool differs) {
  const auto value_of = [&](const std::optional<KernelSide>& side) {
    return side && !(*side.*member).empty() ? *side.*member : std::string("-");
  };
  if (d.baseline && d.candidate && differs) return value_of(d.baseline) + " -> " + value_of(d.candidate);
  return value_of(d.candidate ? d.candidate : d.baseline);
}

std::string both_or_one(const KernelDifference& d, double KernelSide::*member, std::string (*shown_as)(double)) {
  if (d.baseline && d.candidate) return shown_as(*d.baseline.*member) + " -> " + shown_as(*d.candidate.*member);
  return shown_as(*(d.baseline ? d.baseline : d.candidate).*member);
}

std::string launches_cell(const KernelDifference& d) {
  const double before = d.baseline ? d.baseline->launches_per_pass : 0;
  const double after = d.candidate ? d.candidate->launches_per_pass : 0;
  if (d.baseline && d.candidate && !d.differs(KernelAspect::launches)) return number_text(after);
  return number_text(before) + " -> " + number_text(after);
}

std::string fixed_1(double value) { return text::fixed(value, 1); }
std::string integer_text(int value) { return std::to_string(value); }
std::string kib_cell(std::int64_t bytes) { return kib_text(bytes); }
std::string percent_0(double value) { return text::fixed(value, 0) + "%"; }

// The listed kernels of one case, at most `limit` rows (0: all).
Table kernel_table(const KernelDifferences& differences, std::size_t limit) {
  Table table;
  table.columns = {{"change"},    {"kernel"},   {"launches"}, {"time us"}, {"share"},
                   {"grid"},      {"block"},    {"registers"}, {"shared KiB"}, {"occupancy"}};
  table.columns[1].max_width = 0;  // shortened already; cutting again could hide what tells two apart
  for (const KernelDifference& d : differences.kernels) {
    if (limit > 0 && table.rows.size() >= limit) break;
    const std::string change = d.change == KernelChange::unchanged ? "same" : to_string(d.change);
    // A copy or a fill says so, unless its name does ("Memset (Device)").
    std::string lower = d.short_name;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const std::string kind = d.kind == "kernel" || lower.find(d.kind) != std::string::npos ? "" : " (" + d.kind + ")";
    table.add_row({Cell::text(change), Cell::text(d.short_name + kind), Cell::text(launches_cell(d)),
                   Cell::text(both_or_one(d, &KernelSide::time_us, fixed_1)),
                   Cell::text(both_or_one(d, &KernelSide::time_share, share_text)),
                   Cell::text(text_cell(d, &KernelSide::grid, d.differs(KernelAspect::grid))),
                   Cell::text(text_cell(d, &KernelSide::block, d.differs(KernelAspect::block))),
                   Cell::text(aspect_cell<int>(d, &KernelSide::registers_per_thread, integer_text,
                                               d.differs(KernelAspect::registers))),
                   Cell::text(aspect_cell<std::int64_t>(d, &KernelSide::shared_memory_bytes, kib_cell,
                                                        d.differs(KernelAspect::shared_memory))),
                   Cell::text(aspect_cell<double>(d, &KernelSide::est_occupancy_pct, percent_0,
                                                  d.differs(KernelAspect::occupancy)))});
  }
  return table;
}

// "1 removed, 1 added, 0 changed, 2 unchanged; kernel time 57.3 -> 93.8 us per pass".
std::string kernel_summary(const KernelDifferences& d) {
  if (!d.missing.empty()) return d.missing;
  std::vector<std::string> parts;
  if (d.removed > 0) parts.push_back(std::to_string(d.removed) + " removed");
  if (d.added > 0) parts.push_back(std::to_string(d.added) + " added");
  if (d.changed > 0) parts.push_back(std::to_string(d.changed) + " changed");
  parts.push_back(std::to_string(d.unchanged) + " unchanged");
  std::string line = plural(d.removed + d.added + d.changed + d.unchanged, "kernel", "kernels") + " (" +
                     text::join(parts, ", ") + ")";
  if (d.top_by_time) line += ", the top " + std::to_string(d.kernels.size()) + " by time share shown";
  return line + "; kernel time " + text::fixed(d.baseline_time_us, 1) + " -> " + text::fixed(d.candidate_time_us, 1) +
         " us per pass";
}

bool has_kernel_lines(const CaseComparison& c) {
  return c.kernels && (!c.kernels->kernels.empty() || !c.kernels->missing.empty());
}

std::string more_kernels(const KernelDifferences& d, std::size_t limit) {
  if (d.kernels.size() <= limit) return "";
  return "... and " + std::to_string(d.kernels.size() - limit) + " more kernels (--format json lists them all)";
}

constexpr const char* kKernelsIntro =
    "per pass, baseline -> candidate; share: of the case's kernel time; names shortened, --format json has them in "
    "full";

std::string kernels_text(const Comparison& comparison) {
  const int count = comparison.kernel_difference_cases();
  if (count == 0) return "";
  std::ostringstream out;
  out << "\nKernel differences (" << plural(count, "case", "cases") << "; " << kKernelsIntro << "):\n";
  for (const CaseComparison& c : comparison.cases) {
    if (!has_kernel_lines(c)) continue;
    out << "\n" << report::terminal_safe(c.key.label() + ": " + kernel_summary(*c.kernels)) << "\n";
    if (c.kernels->kernels.empty()) continue;
    std::istringstream table(table_text(kernel_table(*c.kernels, kTextKernelRows), report::Format::table));
    for (std::string line; std::getline(table, line);) out << "  " << line << "\n";
    const std::string more = more_kernels(*c.kernels, kTextKernelRows);
    if (!more.empty()) out << "  " << more << "\n";
  }
  return out.str();
}

std::string kernels_markdown(const Comparison& comparison) {
  const int count = comparison.kernel_difference_cases();
  if (count == 0) return "";
  std::ostringstream out;
  out << "**Kernel differences** (" << plural(count, "case", "cases") << "; " << kKernelsIntro << ")\n\n";
  int shown_cases = 0;
  for (const CaseComparison& c : comparison.cases) {
    if (!has_kernel_lines(c)) continue;
    if (static_cast<std::size_t>(shown_cases) >= kMarkdownKernelCases) break;
    ++shown_cases;
    out << "- " << report::markdown_inline(c.key.label()) << ": " << report::markdown_inline(kernel_summary(*c.kernels))
        << "\n\n";
    if (c.kernels->kernels.empty()) continue;
    out << table_text(kernel_table(*c.kernels, kMarkdownKernelRows), report::Format::markdown);
    const std::string more = more_kernels(*c.kernels, kMarkdownKernelRows);
    if (!more.empty()) out << "\n" << report::markdown_inline(more) << "\n";
    out << "\n";
  }
  if (count > shown_cases) {
    out << "... and " << (count - shown_cases) << " more cases with kernel differences (--format json lists them all)\n\n";
  }
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
    const std::string line = c.key.label() + ": " + c.unjudged.text;
    text += bullet + (markdown ? report::markdown_inline(line) : report::terminal_safe(line)) + "\n";
  }
  return text;
}

// The candidate's claims (issue 37) beside the baseline's ratio for the same claim (file and name).
report::Table compared_claims_table(const Comparison& comparison) {
  report::Table table = claims_table(comparison.candidate_claims);
  std::map<std::string, std::optional<double>> before;
  for (const ClaimLine& line : comparison.baseline_claims) before[line.claims_file + ":" + line.name] = line.ratio;
  table.columns.insert(table.columns.begin() + 5, {"baseline ratio", "", report::Align::right});
  for (std::size_t i = 0; i < table.rows.size(); ++i) {
    const ClaimLine& line = comparison.candidate_claims[i];
    const auto found = before.find(line.claims_file + ":" + line.name);
    table.rows[i].insert(table.rows[i].begin() + 5, found != before.end() && found->second
                                                        ? report::Cell::real(*found->second, 2)
                                                        : report::Cell::null());
  }
  return table;
}

std::string fastest_change_line(const ChoiceChange& change) {
  return change.group + ": " + change.baseline_fastest + " -> " + change.candidate_fastest +
         (change.significant() ? " (both leads significant)"
                               : " (lead " + change.baseline_lead + " before, " + change.candidate_lead + " now)");
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
  out << kernels_text(comparison);
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
  if (!comparison.fastest_changes.empty()) {
    out << "\nFastest variant changed (" << comparison.fastest_changes.size() << "):\n";
    for (const ChoiceChange& change : comparison.fastest_changes) {
      out << "  " << report::terminal_safe(fastest_change_line(change)) << "\n";
    }
  }
  if (!comparison.candidate_claims.empty()) {
    out << "\nClaims (the candidate's measurement against published figures):\n"
        << table_text(compared_claims_table(comparison), report::Format::table);
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
  out << kernels_markdown(comparison);
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
  if (!comparison.fastest_changes.empty()) {
    out << "**Fastest variant changed** (" << comparison.fastest_changes.size() << ")\n\n";
    for (const ChoiceChange& change : comparison.fastest_changes) {
      out << "- " << report::markdown_inline(fastest_change_line(change)) << "\n";
    }
    out << "\n";
  }
  if (!comparison.candidate_claims.empty()) {
    out << "**Claims** (the candidate's measurement against published figures)\n\n"
        << table_text(compared_claims_table(comparison), report::Format::markdown) << "\n";
  }
  out << "<details><summary>Counts per verdict</summary>\n\n"
      << table_text(counts_table(comparison), report::Format::markdown) << "\n"
      << settings_line(comparison.settings) << ".\n\n</details>\n";
  return out.str();
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

std::string render(const Comparison& comparison, Format format) {
  switch (format) {
    case Format::text: return render_text(comparison);
    case Format::markdown: return render_markdown(comparison);
    case Format::json: return render_json(comparison);
  }
  return render_text(comparison);
}

}  // namespace attnsweep::compare
