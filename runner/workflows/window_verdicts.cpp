#include "runner/workflows/window_verdicts.hpp"

#include <algorithm>
#include <optional>
#include <utility>

#include "runner/common/text.hpp"
#include "runner/compare/value_text.hpp"

namespace attnsweep::workflows {
namespace {

using compare::Check;
using compare::Severity;
using compare::TimeVerdict;
using compare::Unjudged;

// The window's verdict in place of compare's. Why the case is not judged: a
// shared GPU or a non-finite output stay compare's; a SLOWER marked against the
// newest night alone is not the window's, a SLOWER marked against the window is.
void take_window_time(compare::CaseComparison& c, const CaseAlert& alert) {
  c.findings.erase(std::remove_if(c.findings.begin(), c.findings.end(),
                                  [](const compare::Finding& f) { return f.check == Check::time; }),
                   c.findings.end());
  c.time = alert.tonight.time;
  if (c.unjudged.why == Unjudged::Why::capped_slower) c.unjudged = {};
  if (c.unjudged.empty() && c.time.verdict == TimeVerdict::slower && c.time.marked()) {
    c.unjudged = {Unjudged::Why::capped_slower, "SLOWER than the window while " + c.time.cap_mark};
  }
  // Timed tonight and no night of its window timed it: no baseline, so no verdict,
  // never "same" (issue 55, item 4).
  if (c.unjudged.empty() && c.time.verdict == TimeVerdict::not_timed) {
    c.unjudged = {Unjudged::Why::no_window, c.time.reason.empty() ? "no night of the window timed this case" : c.time.reason};
  }
}

// The kernel list was chosen by compare's verdict against the newest night
// alone: it stays where the window's verdict is a change too, or where a count
// or the backend changed. (A change only the window sees lists none.)
void keep_kernels_of_changes(compare::CaseComparison& c) {
  if (!c.has(Check::counts) && !c.has(Check::backend) && !c.time.changed()) c.kernels.reset();
}

std::string p_value_text(const compare::TimeComparison& time) {
  if (!time.p_value) return "p -";
  return *time.p_value < 1e-4 ? "p < 1e-4" : "p = " + text::fixed(*time.p_value, 4);
}

// The window's time finding of a case that is not SAME (nor NOT_TIMED); a
// slowdown on fewer than `consecutive` nights is a WATCH note, added to `watch`.
compare::Finding window_finding(const compare::CaseComparison& c, const CaseAlert& alert, const WindowSettings& window,
                                std::vector<std::string>& watch) {
  const compare::TimeComparison& time = c.time;
  compare::Finding finding{Check::time, Severity::info, "time", window_text(alert.tonight),
                           compare::samples_text(time.candidate_median_us, time.candidate_samples), ""};
  const std::string p_value = p_value_text(time);
  const std::string change = time.ratio ? compare::signed_percent(*time.ratio) : "";
  if (time.verdict == TimeVerdict::suspect) {
    finding.detail = "SUSPECT, time not judged: " + time.reason;
  } else if (time.verdict == TimeVerdict::ambiguous) {
    finding.detail = "AMBIGUOUS: " + time.reason;
  } else if (time.marked()) {
    finding.detail = std::string(to_string(time.verdict)) + " " + change + " against the window, " + p_value + ", " +
                     time.cap_mark + ": not counted";
  } else if (time.verdict == TimeVerdict::faster) {
    finding.severity = Severity::improvement;
    finding.detail = "FASTER " + change + " against the window, " + p_value;
  } else if (alert.alert == Alert::regression) {
    finding.severity = Severity::regression;
    finding.detail = "SLOWER " + change + " against the window, " + p_value + ", on " + std::to_string(alert.streak) +
                     " nights in a row";
  } else {
    finding.detail = "WATCH: SLOWER " + change + " against the window, " + p_value + ", on " +
                     std::to_string(alert.streak) + " of the " + std::to_string(window.consecutive) +
                     " nights in a row that make a regression";
    watch.push_back(c.key.label() + ": " + change + " against " + window_text(alert.tonight));
  }
  return finding;
}

}  // namespace

std::vector<std::string> apply_window(compare::Comparison& comparison, const std::vector<const Night*>& nights,
                                      const WindowSettings& window, const compare::CompareSettings& settings,
                                      const std::function<std::size_t(const compare::CaseKey&)>& usable_nights) {
  std::vector<std::string> watch;
  for (compare::CaseComparison& c : comparison.cases) {
    if (!c.timed_on_both_sides()) continue;  // NOT_TIMED, as compare said
    const std::size_t usable = usable_nights ? std::min(usable_nights(c.key), nights.size()) : nights.size();
    const std::vector<const Night*> own(nights.begin(), nights.begin() + static_cast<std::ptrdiff_t>(std::max<std::size_t>(usable, 1)));
    const CaseAlert alert = alert_for(c.key, own, window, settings.for_case(c.key));
    take_window_time(c, alert);
    keep_kernels_of_changes(c);
    const CaseRule* rule = settings.rule_for(c.key);
    const bool ignored = rule && !rule->ignore.empty();
    if (c.time.verdict != TimeVerdict::same && c.time.verdict != TimeVerdict::not_timed) {
      std::vector<std::string> own_watch;
      c.findings.push_back(window_finding(c, alert, window, ignored ? own_watch : watch));
    }
    if (ignored) compare::ignore_case(c, rule->ignore);  // a nightly rule's: no verdict of it counts
  }
  return watch;
}

}  // namespace attnsweep::workflows
