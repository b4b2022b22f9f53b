#include "runner/workflows/nightly_summary.hpp"

#include <regex>

#include "runner/common/text.hpp"
#include "runner/compare/comparison_report.hpp"
#include "runner/report/escaping.hpp"

namespace attnsweep::workflows {
namespace {

std::string plural_s(std::size_t count) { return count == 1 ? "" : "s"; }

std::string head(const NightlySummary& s) {
  std::string text = "# attnsweep nightly " + s.stamp + "\n\n";
  text += "- config: " + report::markdown_code(s.config_path) + "\n";
  text += "- tonight: " + report::markdown_code(s.db_path) + " run " + std::to_string(s.run_id) + ", " +
          std::to_string(s.stored_cases) + " of " + std::to_string(s.planned_cases) + " planned cases, status " +
          to_string(s.status) + "\n";
  if (!s.skipped.empty()) {
    std::string lines = std::regex_replace(s.skipped, std::regex("\n(?=.)"), "; ");
    if (lines.back() == '\n') lines.pop_back();
    text += "- history: " + report::markdown_inline(lines) + "\n";
  }
  return text;
}

std::string first_night(const NightlySummary& s) {
  std::string text = "\nNo previous finished night on " + s.device + " in " + report::markdown_code(s.history_dir) +
                     (s.skipped.empty() ? std::string() : " that can be a baseline (see the skipped nights above)") +
                     ": tonight's run is the first baseline; nothing was compared.\n";
  if (s.shared_cases > 0) {
    text += "\n**" + std::to_string(s.shared_cases) +
            " of tonight's cases were measured while another process computed on the GPU: INCONCLUSIVE.**\n";
  }
  return text;
}

std::string baseline_lines(const NightlySummary& s) {
  std::string text = "- baseline: " + report::markdown_code(s.baseline);
  if (s.baseline_migrated_from) {
    text += " (schema " + std::to_string(*s.baseline_migrated_from) + ", read through a migrated copy)";
  }
  text += "\n";
  if (!s.window_nights.empty()) {
    const std::size_t nights = s.window_nights.size();
    text += "- time window: " + std::to_string(nights) + " good night" + plural_s(nights) + " (" +
            report::markdown_inline(text::join(s.window_nights, ", ")) + "): per case the median of their medians; " +
            "a time regression needs " + std::to_string(s.consecutive) + " night" +
            plural_s(static_cast<std::size_t>(s.consecutive)) + " in a row slower than the window\n";
  }
  return text + "\n";
}

// A bold title and its items, one line each.
std::string item_list(const std::string& title, const std::vector<std::string>& items) {
  std::string text = title + "\n\n";
  for (const std::string& item : items) text += "- " + report::markdown_inline(item) + "\n";
  return text + "\n";
}

// Why tonight is no pass though nothing regressed (or, with a regression, what
// puts its times in doubt): first, before anything else is read.
std::string trust_lines(const NightlySummary& s) {
  if (s.trust_reasons.empty()) return "";
  const bool regression = s.comparison && s.comparison->has_regression();
  return item_list(regression ? "**The times of this night are in doubt:**"
                              : "**INCONCLUSIVE: this night is no pass** (exit 4; docs/reproducibility.md, "
                                "\"Inconclusive nights\"):",
                   s.trust_reasons);
}

std::string compared(const NightlySummary& s) {
  const std::string trust = trust_lines(s);
  std::string text = (trust.empty() ? "" : "\n" + trust) + baseline_lines(s);
  if (!s.accepted.empty()) {
    text += item_list("**Accepted changes** (their cases' time window starts at the accepted night; "
                      "docs/reproducibility.md, \"Accepting a change\")",
                      s.accepted);
  }
  if (!s.watch.empty()) {
    text += item_list("**Watch** (" + std::to_string(s.watch.size()) + " case" + plural_s(s.watch.size()) +
                          " slower than the window tonight, not yet on " + std::to_string(s.consecutive) +
                          " nights in a row: not a failure; a regression if slower again next night)",
                      s.watch);
  }
  if (!s.suspect.empty()) {
    text += item_list("**Suspect** (" + std::to_string(s.suspect.size()) + " case" + plural_s(s.suspect.size()) +
                          " with a `suspect` validity label: their times are not judged tonight, their counts, "
                          "backend, status and numerics are; docs/measurement.md, \"Validity\")",
                      s.suspect);
  }
  if (s.comparison->cases.empty()) {
    // Another kind of device, or other shapes: a gate that compared nothing must not pass.
    text += "**No case of tonight's run is in the baseline: nothing was compared** (another device kind, "
            "or another config: the warnings below say which).\n\n";
  }
  return text + compare::render(*s.comparison, compare::Format::markdown);
}

}  // namespace

std::string render_nightly_summary(const NightlySummary& summary) {
  switch (summary.end) {
    case NightEnd::unfinished:
      return head(summary) + "\n**The night did not finish (" + to_string(summary.status) +
             "): nothing was compared.**\n";
    case NightEnd::first_night: return head(summary) + first_night(summary);
    case NightEnd::compared: return head(summary) + compared(summary);
  }
  return head(summary);
}

}  // namespace attnsweep::workflows
