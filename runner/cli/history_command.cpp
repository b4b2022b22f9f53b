// `attnsweep history DIR`: runner/workflows/history.cpp reads the nights; here
// the options become a request, and the history a table on stdout or an HTML file.
#include <fstream>
#include <iostream>

#include "runner/cli/commands.hpp"
#include "runner/cli/guarded.hpp"
#include "runner/common/errors.hpp"
#include "runner/compare/threshold.hpp"
#include "runner/report/format.hpp"
#include "runner/report/writers.hpp"
#include "runner/workflows/history.hpp"
#include "runner/workflows/night_window.hpp"

namespace attnsweep::cli {

int history_command(const HistoryOptions& options) {
  return guarded("error: ", [&] {
    workflows::HistoryRequest request;
    request.history_dir = options.history_dir;
    request.last = workflows::parse_night_count(options.last, "--last", 1000, 30);
    request.settings.threshold = compare::parse_threshold_percent(options.threshold);
    request.settings.min_change_us = compare::parse_min_change_us(options.min_change_us);
    const report::Format format = report::parse_format(options.format);
    std::ofstream html;
    if (!options.html_path.empty()) {
      // Opened before the nights are read: a path that cannot be written is bad input.
      html.open(options.html_path, std::ios::binary | std::ios::trunc);
      if (!html) throw BadInputError("--html: cannot write " + options.html_path);
    }
    const workflows::History history = workflows::read_history(request);
    if (html.is_open()) {
      html << workflows::history_html(history);
      html.close();
      if (!html) throw std::runtime_error("--html: cannot write " + options.html_path);
    }
    report::write_table(std::cout, workflows::history_table(history), format);
    for (const std::string& skipped : history.skipped) std::cerr << "history: skipped " << skipped << "\n";
    if (html.is_open() || !options.html_path.empty()) std::cerr << "history: page written to " << options.html_path << "\n";
    return static_cast<int>(kExitOk);
  });
}

}  // namespace attnsweep::cli
