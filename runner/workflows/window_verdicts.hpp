#pragma once
// Tonight's comparison with the window's time verdicts (docs/reproducibility.md,
// "The window and the alert rule"). compare judged every case against the
// newest good night; here, for each case timed on both sides, the time verdict,
// its finding, why it is not judged, and whether its kernels are listed become
// the window's and the alert rule's (night_window.hpp). Status, counts,
// backend and numerics stay compare's: they fail at once, against the newest night.
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "runner/compare/compare_runs.hpp"
#include "runner/workflows/night_window.hpp"

namespace attnsweep::workflows {

// `nights[0]` is tonight, then the good nights newest first (alert_for's order).
// Returns the watch items: "label: +98.2% against 310.2 us (window of 5 nights, ...)".
// `usable_nights`, when given, says how many of `nights` (tonight first) a case
// may be judged with: an accepted change (acceptance.hpp) restarts a case's
// window at the night it was seen, so the nights before it no longer count.
std::vector<std::string> apply_window(compare::Comparison& comparison, const std::vector<const Night*>& nights,
                                      const WindowSettings& window, const compare::CompareSettings& settings,
                                      const std::function<std::size_t(const compare::CaseKey&)>& usable_nights = {});

}  // namespace attnsweep::workflows
