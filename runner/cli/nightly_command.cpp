// `attnsweep nightly`: runner/workflows/nightly.cpp runs and compares; here the
// options become a request, and the outcome the printed summary and exit code.
#include <iostream>

#include "runner/cli/commands.hpp"
#include "runner/cli/guarded.hpp"
#include "runner/common/errors.hpp"
#include "runner/common/interrupt.hpp"
#include "runner/compare/threshold.hpp"
#include "runner/common/whole_file.hpp"
#include "runner/workflows/night_verdict.hpp"
#include "runner/workflows/nightly.hpp"
#include "runner/workflows/nightly_inputs.hpp"
#include "runner/workflows/nightly_json.hpp"

namespace attnsweep::cli {

int nightly_command(const NightlyOptions& options) {
  return guarded("error: ", [&] {
    workflows::NightlyRequest request;
    request.config_path = options.config_path;
    request.history_dir = options.history_dir;
    request.baseline = options.baseline;
    request.db_path = options.db_path;
    request.summary_path = options.summary_path;
    request.json_path = options.json_path;
    if (!options.device.empty()) request.device = Device::parse(options.device);
    request.settings.threshold = compare::parse_threshold_percent(options.threshold);
    request.settings.min_change_us = compare::parse_min_change_us(options.min_change_us);
    request.window.window = workflows::parse_night_count(options.window, "--window", 100, 5);
    request.window.consecutive = workflows::parse_night_count(options.consecutive, "--consecutive", 30, 2);
    workflows::check_window_settings(request.window);
    if (!options.baseline.empty() && (options.window_given || options.consecutive_given)) {
      throw BadInputError(std::string(options.window_given ? "--window" : "--consecutive") +
                          " needs --history (the previous nights); a pinned --baseline is one run, compared as it is");
    }
    const workflows::NightlyOutcome outcome = workflows::run_nightly(request);
    std::cout << "\n" << outcome.summary << "\n";
    std::cout << "database: " << outcome.db_path << "\n";
    if (outcome.summary_error.empty()) std::cout << "summary: " << outcome.summary_path << "\n";
    if (!outcome.history_db.empty() && outcome.history_error.empty()) {
      std::cout << "history: " << outcome.history_db << " and " << outcome.history_summary << "\n";
    }
    workflows::NightVerdict verdict = workflows::night_verdict(outcome);
    std::cout << verdict.line << "\n";
    int& code = verdict.exit_code;
    if (!outcome.suspect.empty()) {
      std::cout << "nightly: " << outcome.suspect.size() << " suspect case" << (outcome.suspect.size() == 1 ? "" : "s")
                << " not judged on time (validity label; the summary says why)\n";
    }
    if (!outcome.unjudged.empty()) {
      std::cout << "nightly: " << outcome.unjudged.size() << " case" << (outcome.unjudged.size() == 1 ? "" : "s")
                << " not judged on time (the summary says which and why)\n";
    }
    if (!outcome.summary_error.empty()) {
      // The summary is optional: the night is stored (and in the history) all the same.
      std::cout << std::flush;
      std::cerr << "error: " << outcome.summary_error << "; the night is stored in " << outcome.db_path
                << (outcome.history_db.empty() || !outcome.history_error.empty()
                        ? std::string()
                        : " and " + outcome.history_db + " (its summary " + outcome.history_summary + ")")
                << "\n";
      code = kExitRuntimeFailure;
    }
    if (!outcome.history_error.empty()) {
      std::cout << std::flush;
      std::cerr << "error: " << outcome.history_error << "\n";
      code = kExitRuntimeFailure;
    }
    // A SIGINT or SIGTERM after the sweep, while comparing and writing: the
    // night's files are finished as usual (a signal during the sweep is an
    // unfinished night, exit 1 above), and the exit code says it was asked to stop.
    if (outcome.status == RunStatus::done && interrupt_requested()) {
      std::cout << "nightly: stopped by signal " << interrupt_signal() << " after the sweep; its files were written "
                << "all the same (exit " << interrupted_exit_code() << ")\n";
      code = interrupted_exit_code();
    }
    if (!request.json_path.empty()) {
      // Last, with the exit code the command ends with (a summary or history that could not be written included).
      try {
        workflows::refuse_night_output(request, outcome, request.json_path, "--summary-json");  // again, after the night
        write_whole_file(request.json_path, workflows::render_nightly_json(outcome, verdict), "--summary-json");
        std::cout << "summary JSON: " << request.json_path << "\n";
      } catch (const std::exception& error) {
        std::cout << std::flush;
        std::cerr << "error: " << error.what() << "; the night is stored in " << outcome.db_path << "\n";
        code = kExitRuntimeFailure;
      }
    }
    return code;
  });
}

}  // namespace attnsweep::cli
