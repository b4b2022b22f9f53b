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

// The same file, or the same name where one of them does not exist yet.
bool same_file(const fs::path& a, const fs::path& b) {
  std::error_code error;
  if (fs::exists(a, error) && fs::exists(b, error)) return fs::equivalent(a, b, error);
  return fs::weakly_canonical(fs::absolute(a), error) == fs::weakly_canonical(fs::absolute(b), error);
}

bool is_sqlite_database(const fs::path& path) {
  static const std::string header("SQLite format 3\0", 16);
  std::ifstream file(path, std::ios::binary);
  std::string start(header.size(), '\0');
  return file.read(start.data(), static_cast<std::streamsize>(start.size())) && start == header;
}

// -o never replaces a database the report reads, SQLite's files beside it
// (replacing the -wal loses what it holds), any other SQLite database, or a
// symbolic link that names nothing.
void refuse_output(const std::string& output, const std::vector<std::pair<std::string, std::string>>& databases) {
  std::error_code error;
  // A link that names nothing: writing through it would make a file wherever it points (a
  // folder chosen by whoever made the link), replacing it would lose the link. Either is a
  // guess at what was meant; a link to a file is written through, as always.
  if (fs::is_symlink(output, error) && !fs::exists(output, error)) {
    throw BadInputError("-o " + output + ": is a symbolic link to " + fs::read_symlink(output, error).string() +
                        ", which does not exist; remove the link or name another file");
  }
  if (fs::is_directory(output, error)) throw BadInputError("-o " + output + ": is a directory; name a file in it");
  const fs::path folder = fs::absolute(output).parent_path();
  if (!fs::is_directory(folder, error)) {
    throw BadInputError("-o " + output + ": the folder " + folder.string() + " does not exist");
  }
  for (const auto& [database, what] : databases) {
    if (same_file(output, database)) throw BadInputError("-o " + output + ": is " + what + "; name another file");
    for (const char* suffix : {"-wal", "-shm", "-journal"}) {
      if (same_file(output, database + suffix)) {
        throw BadInputError("-o " + output + ": is SQLite's " + suffix + " file of " + database +
                            "; name another file");
      }
    }
  }
  if (fs::is_regular_file(output, error) && is_sqlite_database(output)) {
    throw BadInputError("-o " + output + ": is an SQLite database; name another file");
  }
}

}  // namespace

int report_command(const ReportOptions& options) {
  return guarded("error: report: ", [&] {
    const std::string output = options.output.empty() ? default_output(options) : options.output;
    if (output != "-") {
      std::vector<std::pair<std::string, std::string>> databases = {{options.db_path, "the database itself"}};
      if (!options.compare_with.empty()) {
        databases.emplace_back(compare::parse_run_argument(options.compare_with, "--compare").path,
                               "the database --compare reads");
      }
      refuse_output(output, databases);
    }
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
    write_whole_file(output, text.str(), "-o");
    std::cout << "report of run " << report.run.run_id << " (" << report.cases.size() << " cases) written to "
              << output << "\n";
    return static_cast<int>(kExitOk);
  });
}

}  // namespace attnsweep::cli
