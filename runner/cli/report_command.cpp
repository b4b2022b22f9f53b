// `attnsweep report DB [--run RUN] [--compare OTHER[:RUN]] [-o FILE] [--format html|markdown]`:
// builds the run's report (runner/run_report) and writes it whole or not at
// all: into a temporary file beside the output, renamed over it at the end.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "runner/cli/commands.hpp"
#include "runner/cli/guarded.hpp"
#include "runner/common/errors.hpp"
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

void refuse_output(const std::string& output, const std::string& db_path) {
  std::error_code error;
  if (fs::exists(output, error) && fs::exists(db_path, error) && fs::equivalent(output, db_path, error)) {
    throw BadInputError("-o " + output + ": is the database itself; name another file");
  }
  if (fs::is_directory(output, error)) throw BadInputError("-o " + output + ": is a directory; name a file in it");
  const fs::path folder = fs::absolute(output).parent_path();
  if (!fs::is_directory(folder, error)) {
    throw BadInputError("-o " + output + ": the folder " + folder.string() + " does not exist");
  }
}

// Writes `text` to `output` whole: a reader never sees half a report, and a
// failure leaves what was there before.
void write_whole(const std::string& output, const std::string& text) {
  const std::string temporary = output + ".tmp-" + std::to_string(::getpid());
  {
    std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
    file << text;
    file.close();
    if (!file) {
      std::remove(temporary.c_str());
      throw BadInputError("-o " + output + ": cannot write " + temporary);
    }
  }
  std::error_code error;
  fs::rename(temporary, output, error);
  if (error) {
    std::remove(temporary.c_str());
    throw BadInputError("-o " + output + ": cannot write: " + error.message());
  }
}

}  // namespace

int report_command(const ReportOptions& options) {
  return guarded("error: report: ", [&] {
    const std::string output = options.output.empty() ? default_output(options) : options.output;
    if (output != "-") refuse_output(output, options.db_path);
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
    write_whole(output, text.str());
    std::cout << "report of run " << report.run.run_id << " (" << report.cases.size() << " cases) written to "
              << output << "\n";
    return static_cast<int>(kExitOk);
  });
}

}  // namespace attnsweep::cli
