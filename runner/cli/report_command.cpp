// `attnsweep report DB [--run RUN] [--compare OTHER[:RUN]] [-o FILE] [--format html|markdown]`:
// builds the run's report (runner/run_report) and writes it whole or not at
// all: into a temporary file beside the output, renamed over it at the end.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "runner/cli/commands.hpp"
#include "runner/cli/guarded.hpp"
#include "runner/common/errors.hpp"
#include "runner/common/whole_file.hpp"
#include "runner/compare/compare_runs.hpp"
#include "runner/run_report/html_report.hpp"
#include "runner/run_report/markdown_report.hpp"
#include "runner/run_report/run_report.hpp"

namespace attnsweep::cli {
namespace {

namespace fs = std::filesystem;

std::optional<std::int64_t> parse_run(const std::string& text) {
  if (text == "latest") return std::nullopt;
  const bool digits = !text.empty() && text.size() <= 18 &&
                      std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!digits || std::stoll(text) <= 0) {
    throw BadInputError("--run: '" + text + "' is not a run id (a positive integer) or latest");
  }
  return std::stoll(text);
}

// Without -o: the HTML beside the database (its trace links stay short), the markdown on stdout.
std::string default_output(const ReportOptions& options) {
  if (options.format == "markdown") return "-";
  const fs::path db(options.db_path);
  return (db.parent_path() / (db.stem().string() + "-report.html")).string();
}


}  // namespace

int report_command(const ReportOptions& options) {
  return guarded("error: report: ", [&] {
    const std::string output = options.output.empty() ? default_output(options) : options.output;
    std::vector<std::pair<std::string, std::string>> databases = {{options.db_path, "the database itself"}};
    if (!options.compare_with.empty()) {
      databases.emplace_back(compare::parse_run_argument(options.compare_with, "--compare").path,
                             "the database --compare reads");
    }
    if (output != "-") refuse_output_path(output, "-o", databases);
    run_report::ReportRequest request;
    request.db_path = options.db_path;
    request.run_id = parse_run(options.run);
    request.compare_with = options.compare_with;
    request.output_path = output;
    request.trace_url_base = options.trace_url_base;
    const run_report::RunReport report = run_report::build_run_report(request);
    std::ostringstream text;
    if (options.format == "markdown") {
      run_report::write_markdown_report(text, report);
    } else {
      run_report::write_html_report(text, report);
    }
    if (output == "-") {
      std::cout << text.str() << std::flush;
      return static_cast<int>(kExitOk);
    }
    refuse_output_path(output, "-o", databases);  // again, just before: building the report took a while
    write_whole_file(output, text.str(), "-o");
    std::cout << "report of run " << report.run.run_id << " (" << report.cases.size() << " cases) written to "
              << output << "\n";
    return static_cast<int>(kExitOk);
  });
}

}  // namespace attnsweep::cli
