// `attnsweep history DIR`: runner/workflows/history.cpp reads the nights; here
// the options become a request, and the history a table on stdout or an HTML file.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "runner/cli/commands.hpp"
#include "runner/cli/guarded.hpp"
#include "runner/common/errors.hpp"
#include "runner/common/text.hpp"
#include "runner/common/whole_file.hpp"
#include "runner/compare/threshold.hpp"
#include "runner/report/escaping.hpp"
#include "runner/report/format.hpp"
#include "runner/report/writers.hpp"
#include "runner/workflows/good_nights.hpp"
#include "runner/workflows/history.hpp"
#include "runner/workflows/night_window.hpp"

namespace attnsweep::cli {
namespace {

// Refuses (BadInputError) a page path that is a folder, a file of the history
// it reads (a night, a summary, an acceptance), or whose folder is missing or
// cannot be written into (the page is renamed into place there). A FIFO or a
// device, /dev/stdout, is written into as it is.
void check_page_path(const std::string& path, const std::string& history_dir) {
  struct stat named {};
  // A FIFO or a device (/dev/stdout) is written into as it is.
  if (::stat(path.c_str(), &named) == 0 && !S_ISREG(named.st_mode) && !S_ISDIR(named.st_mode)) return;
  // A folder, a missing folder, a link that names nothing, a night or any other database.
  refuse_output_path(path, "--html");
  workflows::refuse_history_file(path, "--html", history_dir);
  std::error_code error;
  const std::filesystem::path absolute = std::filesystem::absolute(path, error);
  const std::string folder = (error ? std::filesystem::path(path) : absolute).parent_path().string();
  if (::access(folder.c_str(), W_OK | X_OK) != 0) {
    throw BadInputError("--html " + path + ": cannot write into " + folder + ": " + std::strerror(errno));
  }
}

}  // namespace

int history_command(const HistoryOptions& options) {
  return guarded("error: ", [&] {
    workflows::HistoryRequest request;
    request.history_dir = options.history_dir;
    request.last = workflows::parse_night_count(options.last, "--last", 1000, 30);
    request.settings.threshold = compare::parse_threshold_percent(options.threshold);
    request.settings.min_change_us = compare::parse_min_change_us(options.min_change_us);
    const report::Format format = report::parse_format(options.format);
    const std::vector<std::string> by = options.by.empty() ? std::vector<std::string>{} : workflows::parse_version_facts(options.by);
    if (options.culprits && !by.empty()) throw BadInputError("--culprits lists the changes; --by splits the nights' rows: give one of the two");
    // Checked before the nights are read: a page that cannot be written is bad input.
    if (!options.html_path.empty()) check_page_path(options.html_path, options.history_dir);
    const workflows::History history = workflows::read_history(request);
    // Written whole, after the nights are read, as report's: a failure (a damaged
    // night, a signal, a full disk) leaves the previous page as it was.
    if (!options.html_path.empty()) {
      check_page_path(options.html_path, options.history_dir);  // again: reading took a while
      write_whole_file(options.html_path, workflows::history_html(history), "--html");
    }
    report::write_table(std::cout, options.culprits ? workflows::culprit_table(history) : workflows::history_table(history, by),
                        format);
    // File names and records anyone with write access to the folder can plant:
    // shown, never obeyed (issue 55, item 17).
    using report::terminal_safe;
    for (const std::string& skipped : history.skipped) std::cerr << "history: skipped " << terminal_safe(skipped) << "\n";
    for (const workflows::Acceptance& a : history.acceptances) {
      std::cerr << "history: accepted (" << terminal_safe(a.file) << "): the change of night " << a.night << " for "
                << terminal_safe(text::join(a.cases, ", ") + ", by " + a.by + " at " + a.at + ": " + a.reason) << "\n";
    }
    if (!options.html_path.empty()) std::cerr << "history: page written to " << terminal_safe(options.html_path) << "\n";
    return static_cast<int>(kExitOk);
  });
}

}  // namespace attnsweep::cli
