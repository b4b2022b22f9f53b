// `attnsweep nightly`: runner/execute/nightly.cpp runs and compares; here the
// options become a request, and the outcome the printed summary and exit code.
#include <iostream>

#include "runner/cli/commands.hpp"
#include "runner/cli/guarded.hpp"
#include "runner/compare/threshold.hpp"
#include "runner/execute/nightly.hpp"

namespace attnsweep::cli {

int nightly_command(const NightlyOptions& options) {
  return guarded("error: ", [&] {
    execute::NightlyRequest request;
    request.config_path = options.config_path;
    request.history_dir = options.history_dir;
    request.baseline = options.baseline;
    request.db_path = options.db_path;
    request.summary_path = options.summary_path;
    if (!options.device.empty()) request.device = Device::parse(options.device);
    request.settings.threshold = compare::parse_threshold_percent(options.threshold);
    request.settings.min_change_us = compare::parse_min_change_us(options.min_change_us);
    const execute::NightlyOutcome outcome = execute::run_nightly(request);
    std::cout << "\n" << outcome.summary << "\n";
    std::cout << "database: " << outcome.db_path << "\nsummary: " << outcome.summary_path << "\n";
    if (!outcome.history_db.empty()) {
      std::cout << "history: " << outcome.history_db << " and " << outcome.history_summary << "\n";
    }
    if (outcome.status != RunStatus::done) {
      std::cout << "nightly: the run did not finish (" << to_string(outcome.status) << ")\n";
      return static_cast<int>(kExitRuntimeFailure);
    }
    std::cout << (outcome.regression ? "nightly: REGRESSION (exit 1)\n" : "nightly: no regression\n");
    return static_cast<int>(outcome.regression ? kExitRuntimeFailure : kExitOk);
  });
}

}  // namespace attnsweep::cli
