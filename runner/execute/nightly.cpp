#include "runner/execute/nightly.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <regex>
#include <vector>

#include "runner/common/errors.hpp"
#include "runner/compare/comparison_report.hpp"
#include "runner/execute/sweep.hpp"
#include "storage/run_reader.hpp"
#include "storage/store.hpp"

namespace attnsweep::execute {
namespace {

namespace fs = std::filesystem;

std::string utc_stamp() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y%m%dT%H%M%SZ", &utc);
  return text;
}

bool is_directory(const std::string& path) {
  struct stat info {};
  return stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) throw std::runtime_error(path + ": cannot write the nightly summary");
}

// A scratch folder for copies of earlier nights; removed file by file
// (std::filesystem::remove_all is avoided: it crashed inside this binary,
// docs/development.md).
class ScratchFolder {
 public:
  ScratchFolder() {
    std::string pattern = (fs::temp_directory_path() / "attnsweep-nightly-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("cannot create a scratch folder under " + pattern);
    path_ = pattern;
  }
  ~ScratchFolder() {
    std::error_code ignored;
    for (const auto& entry : fs::directory_iterator(path_, ignored)) fs::remove(entry.path(), ignored);
    fs::remove(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string shown_run(const std::string& path, const storage::RunRow& run) {
  return path + " run " + std::to_string(run.run_id) + " (started " + run.started_at + ")";
}

}  // namespace

std::optional<std::string> previous_night(const std::string& history_dir, const std::string& scratch_dir,
                                          std::string& skipped) {
  static const std::regex name(R"(nightly-[0-9]{8}T[0-9]{6}Z\.db)");
  std::vector<std::string> nights;
  for (const auto& entry : fs::directory_iterator(history_dir)) {
    const std::string file = entry.path().filename().string();
    if (entry.is_regular_file() && std::regex_match(file, name)) nights.push_back(file);
  }
  std::sort(nights.rbegin(), nights.rend());  // newest first
  for (const auto& night : nights) {
    const std::string copy = scratch_dir + "/" + night;
    std::error_code error;
    fs::copy_file(history_dir + "/" + night, copy, fs::copy_options::overwrite_existing, error);
    if (error) {
      skipped += "skipped " + night + ": cannot copy it (" + error.message() + ")\n";
      continue;
    }
    try {
      const storage::RunReader reader(copy);
      const auto run = reader.latest_run();
      if (run && run->status == RunStatus::done) return copy;
      skipped += "skipped " + night + ": its latest run is " + (run ? to_string(run->status) : "absent") + "\n";
    } catch (const std::exception& problem) {
      skipped += "skipped " + night + ": " + problem.what() + "\n";
    }
  }
  return std::nullopt;
}

NightlyOutcome run_nightly(const NightlyRequest& request) {
  if (request.history_dir.empty() == request.baseline.empty()) {
    throw BadInputError("nightly needs exactly one of --history DIR (compare with the previous night there) and "
                        "--baseline DATABASE[:RUN] (compare with a pinned run)");
  }
  if (!request.history_dir.empty()) {
    if (fs::exists(request.history_dir) && !is_directory(request.history_dir)) {
      throw BadInputError(request.history_dir + ": --history must be a folder (the previous nights' nightly-*.db)");
    }
    std::error_code error;
    fs::create_directories(request.history_dir, error);
    if (error) throw BadInputError(request.history_dir + ": cannot create the --history folder: " + error.message());
  }
  NightlyOutcome outcome;
  outcome.stamp = utc_stamp();
  outcome.db_path = request.db_path.empty() ? "nightly-" + outcome.stamp + ".db" : request.db_path;
  outcome.summary_path = request.summary_path;
  if (outcome.summary_path.empty()) {
    const fs::path db(outcome.db_path);
    outcome.summary_path = (db.parent_path() / (db.stem().string() + ".md")).string();
  }

  if (!request.history_dir.empty()) {
    outcome.history_db = request.history_dir + "/nightly-" + outcome.stamp + ".db";
    outcome.history_summary = request.history_dir + "/nightly-" + outcome.stamp + ".md";
    if (fs::exists(outcome.history_db) || fs::exists(outcome.history_summary)) {
      throw BadInputError(outcome.history_db + ": already exists (another nightly started this second?); nothing ran");
    }
  }

  // The baseline first: bad input is refused before an expensive sweep.
  ScratchFolder scratch;
  std::string skipped;
  std::optional<std::string> baseline_path;
  compare::RunArgument baseline_argument;
  if (!request.baseline.empty()) {
    baseline_argument = compare::parse_run_argument(request.baseline, "--baseline");
    try {
      const storage::RunReader check(baseline_argument.path);
      compare::resolve_run(check, baseline_argument, "--baseline");
    } catch (const BadInputError& error) {
      const std::string message = error.what();
      throw BadInputError(message.rfind("--baseline", 0) == 0 ? message : "--baseline: " + message);
    }
    baseline_path = baseline_argument.path;
  } else {
    baseline_path = previous_night(request.history_dir, scratch.path(), skipped);
  }

  SweepRequest sweep;
  sweep.config_path = request.config_path;
  sweep.db_path = outcome.db_path;
  sweep.device = request.device;
  const SweepOutcome night = run_sweep(sweep);
  outcome.run_id = night.run_id;
  outcome.status = night.status;

  std::string summary = "# attnsweep nightly " + outcome.stamp + "\n\n";
  summary += "- config: `" + request.config_path + "`\n";
  summary += "- tonight: `" + outcome.db_path + "` run " + std::to_string(night.run_id) + ", " +
             std::to_string(night.cases.size()) + " cases, status " + to_string(night.status) + "\n";
  if (!skipped.empty()) summary += "- history: " + std::regex_replace(skipped, std::regex("\n(?=.)"), "; ");
  if (night.status != RunStatus::done) {
    summary += "\n**The night did not finish (" + std::string(to_string(night.status)) +
               "): nothing was compared.**\n";
    outcome.regression = true;
  } else if (!baseline_path) {
    summary += "\nNo previous finished night in `" + request.history_dir +
               "`: tonight's run is the first baseline; nothing was compared.\n";
  } else {
    const storage::RunReader baseline(*baseline_path);
    const std::int64_t baseline_run = compare::resolve_run(baseline, baseline_argument, "--baseline");
    const storage::RunReader candidate(outcome.db_path);
    compare::Comparison comparison =
        compare::compare_runs(baseline, baseline_run, candidate, night.run_id, request.settings);
    // The history's name for the baseline, not the scratch copy's.
    const std::string shown_path =
        request.baseline.empty() ? request.history_dir + "/" + fs::path(*baseline_path).filename().string()
                                 : *baseline_path;
    comparison.baseline.path = shown_path;
    outcome.baseline = shown_run(shown_path, *baseline.run(baseline_run));
    summary += "- baseline: `" + outcome.baseline + "`\n\n";
    summary += compare::render(comparison, compare::Format::markdown);
    outcome.regression = comparison.has_regression();
  }
  outcome.summary = summary;
  write_text(outcome.summary_path, summary);

  if (!request.history_dir.empty()) {
    // Whole files into the history folder: a consistent snapshot of the database, then the summary.
    storage::snapshot_database(outcome.db_path, outcome.history_db);
    write_text(outcome.history_summary, summary);
  }
  return outcome;
}

}  // namespace attnsweep::execute
