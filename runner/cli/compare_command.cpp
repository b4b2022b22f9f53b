// `attnsweep compare BASELINE[:RUN] CANDIDATE[:RUN]`: two runs side by side
// (runner/compare, docs/compare.md), printed as text, markdown or JSON. Exit 0
// when nothing regressed, 1 on a regression, 2 on bad input; both databases
// are only read.
#include <iostream>
#include <memory>
#include <string>

#include "runner/cli/commands.hpp"
#include "runner/cli/guarded.hpp"
#include "runner/common/errors.hpp"
#include "runner/compare/compare_runs.hpp"
#include "runner/compare/comparison_report.hpp"
#include "runner/compare/threshold.hpp"
#include "runner/storage/run_reader.hpp"

namespace attnsweep::cli {
namespace {

// A regression was found: the code a CI job fails on (1, like a failed run:
// both mean "do not ship this"; a report on stdout tells them apart).
constexpr int kExitRegression = 1;


}  // namespace

int compare_command(const CompareOptions& options) {
  return guarded("error: compare: ", [&] {
    const compare::Format format = compare::parse_format(options.format);
    compare::CompareSettings settings;
    settings.threshold = compare::parse_threshold_percent(options.threshold);
    settings.min_change_us = compare::parse_min_change_us(options.min_change_us);
    const compare::RunArgument baseline = compare::parse_run_argument(options.baseline, "BASELINE");
    const compare::RunArgument candidate = compare::parse_run_argument(options.candidate, "CANDIDATE");
    const auto baseline_database = storage::open_readable(baseline.path, "BASELINE");
    const auto candidate_database = storage::open_readable(candidate.path, "CANDIDATE");
    const storage::RunReader& baseline_reader = baseline_database->reader();
    const storage::RunReader& candidate_reader = candidate_database->reader();
    const std::int64_t baseline_run = compare::resolve_run(baseline_reader, baseline, "BASELINE");
    const std::int64_t candidate_run = compare::resolve_run(candidate_reader, candidate, "CANDIDATE");
    compare::Comparison comparison =
        compare::compare_runs(baseline_reader, baseline_run, candidate_reader, candidate_run, settings);
    // The files as named, not a migrated copy's path.
    comparison.baseline.path = baseline.path;
    comparison.candidate.path = candidate.path;
    std::cout << compare::render(comparison, format) << std::flush;
    if (comparison.has_regression()) return static_cast<int>(kExitRegression);
    return comparison.inconclusive() ? static_cast<int>(kExitInconclusive) : static_cast<int>(kExitOk);
  });
}

}  // namespace attnsweep::cli
