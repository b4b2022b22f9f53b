#include "runner/workflows/nightly_inputs.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <utility>

#include "runner/common/errors.hpp"
#include "runner/common/same_file.hpp"
#include "runner/common/temp_folder.hpp"
#include "runner/common/whole_file.hpp"
#include "runner/common/text.hpp"
#include "runner/storage/readable_database.hpp"
#include "runner/workflows/good_nights.hpp"

namespace attnsweep::workflows {
namespace {

namespace fs = std::filesystem;

std::string utc_stamp() { return text::utc_now("%Y%m%dT%H%M%SZ"); }

bool is_directory(const std::string& path) {
  struct stat info {};
  return stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}


// The folder a file of `path` goes into: its parent, or the current folder.
std::string folder_of(const std::string& path) {
  const fs::path parent = fs::path(path).parent_path();
  return parent.empty() ? "." : parent.string();
}

// Whether the file `path` is, or would be, inside `folder`, symbolic links
// followed (a link to a stored night is inside the history it points into).
bool resolves_into(const std::string& path, const std::string& folder) {
  std::error_code error;
  const fs::path file = fs::weakly_canonical(fs::absolute(path), error);
  if (error) return false;
  return same_file(file.parent_path().string(), folder);
}

// Refuses (BadInputError naming `option`) a folder that is missing, not a
// folder, or that this process cannot write into: found out before the sweep,
// not after it.
void check_writable_folder(const std::string& folder, const std::string& option) {
  struct stat info {};
  if (stat(folder.c_str(), &info) != 0) {
    throw BadInputError(option + ": " + folder + ": " + (errno == ENOENT ? "no such folder" : std::strerror(errno)));
  }
  if (!S_ISDIR(info.st_mode)) throw BadInputError(option + ": " + folder + " is not a folder");
  if (access(folder.c_str(), W_OK | X_OK) != 0) {
    throw BadInputError(option + ": cannot write into " + folder + ": " + std::strerror(errno));
  }
}

// The copies of earlier nights are made under TMPDIR after the sweep: a TMPDIR
// that is missing or cannot be written is refused before it.
void check_temp_folder() { (void)temp_folder(); }

// A history folder is created when the night's files are copied in, not before
// (bad input must leave nothing behind): until then the nearest folder that
// exists on its path must be one this process can write into.
void check_history_folder(const std::string& history) {
  if (fs::exists(history)) {
    if (!is_directory(history)) {
      throw BadInputError(history + ": --history must be a folder (the previous nights' nightly-*.db)");
    }
    check_writable_folder(history, "--history");
    return;
  }
  fs::path existing = fs::absolute(history).parent_path();
  while (!existing.empty() && !fs::exists(existing) && existing != existing.parent_path()) existing = existing.parent_path();
  try {
    check_writable_folder(existing.string(), "--history");
  } catch (const BadInputError& error) {
    throw BadInputError(std::string(error.what()) + " (to create " + history + ")");
  }
}

}  // namespace

void refuse_night_output(const NightlyRequest& request, const NightlyOutcome& outcome, const std::string& output,
                         const std::string& option) {
  // Every input of the night, which no output may replace (the one rule of every
  // output, runner/common/whole_file.hpp): the night's database, the config that
  // runs, the pinned baseline, the markdown summary (for the JSON), and the history.
  std::vector<std::pair<std::string, std::string>> inputs = {
      {outcome.db_path, "the night's database (--db)"}, {request.config_path, "the config that runs"}};
  if (!request.baseline.empty()) {
    inputs.emplace_back(compare::parse_run_argument(request.baseline, "--baseline").path, "the pinned baseline (--baseline)");
  }
  if (option != "--summary") inputs.emplace_back(outcome.summary_path, "the markdown summary (--summary)");
  refuse_output_path(output, option, inputs);
  if (!request.history_dir.empty() && (same_file(folder_of(output), request.history_dir) ||
                                      resolves_into(output, request.history_dir))) {
    // Only nightly's own files enter the history, copied in at the end (a bucket mount takes whole files).
    throw BadInputError(option + " " + output + " is in the --history folder " + request.history_dir +
                        " (itself or through a symbolic link); the summaries go elsewhere, and the markdown one is "
                        "copied in at the end");
  }
  refuse_history_file(output, option, request.history_dir);  // a hard link to a stored night
}

NightlyOutcome name_night_files(const NightlyRequest& request) {
  if (request.history_dir.empty() == request.baseline.empty()) {
    throw BadInputError("nightly needs exactly one of --history DIR (compare with the previous night there) and "
                        "--baseline DATABASE[:RUN] (compare with a pinned run)");
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
  }
  return outcome;
}

void check_night_files(const NightlyRequest& request, const NightlyOutcome& outcome) {
  if (!request.history_dir.empty()) {
    check_history_folder(request.history_dir);
    // SQLite never runs in the history (it may be a bucket mount), and a stored
    // night must not get tonight's run appended to it.
    if (same_file(folder_of(outcome.db_path), request.history_dir) ||
        resolves_into(outcome.db_path, request.history_dir)) {
      throw BadInputError("--db " + outcome.db_path + " is in the --history folder " + request.history_dir +
                          " (itself or through a symbolic link); tonight's database goes on local disk elsewhere, "
                          "and is copied in at the end");
    }
  }
  if (request.db_path.empty() && fs::exists(outcome.db_path)) {
    // Another nightly started this second in this folder: the two would share one database.
    throw BadInputError(outcome.db_path + ": already exists (another nightly started this second here?); nothing ran");
  }
  check_writable_folder(folder_of(outcome.summary_path), "--summary");
  refuse_night_output(request, outcome, outcome.summary_path, "--summary");
  check_temp_folder();
  if (!request.json_path.empty()) {
    check_writable_folder(folder_of(request.json_path), "--summary-json");
    refuse_night_output(request, outcome, request.json_path, "--summary-json");
  }
  if (!request.history_dir.empty() && (fs::exists(outcome.history_db) || fs::exists(outcome.history_summary))) {
    throw BadInputError(outcome.history_db + ": already exists (another nightly started this second?); nothing ran");
  }
}

compare::RunArgument check_baseline(const NightlyRequest& request, const NightlyOutcome& outcome) {
  compare::RunArgument baseline_argument;
  if (!request.baseline.empty()) {
    baseline_argument = compare::parse_run_argument(request.baseline, "--baseline");
    // Tonight's run goes into a database of its own: written into the baseline's
    // file, it would change a pinned file, and be the baseline's latest run.
    if (same_file(baseline_argument.path, outcome.db_path)) {
      throw BadInputError("--baseline " + baseline_argument.path + " is the night's database (--db " +
                          outcome.db_path + "); the baseline is only read: give another --db");
    }
    if (same_file(baseline_argument.path, outcome.summary_path)) {
      throw BadInputError("--baseline " + baseline_argument.path + " is where the summary would go (--summary " +
                          outcome.summary_path + "); give another --summary");
    }
    try {
      const storage::ReadableDatabase check(baseline_argument.path);
      // Pinned now: "the latest run" means the latest before tonight's.
      baseline_argument.run_id = compare::resolve_run(check.reader(), baseline_argument, "--baseline");
      check.reader().check_run(*baseline_argument.run_id);  // a damaged baseline is refused before the sweep
    } catch (const BadInputError& error) {
      const std::string message = error.what();
      throw BadInputError(message.rfind("--baseline", 0) == 0 ? message : "--baseline: " + message);
    }
  } else if (fs::exists(request.history_dir)) {
    // The night to compare with is chosen after the sweep (it must have run on
    // tonight's kind of device); a folder that cannot be listed is refused now.
    std::error_code listing;
    fs::directory_iterator(request.history_dir, listing);
    if (listing) throw BadInputError(request.history_dir + ": cannot list the --history folder: " + listing.message());
  }
  return baseline_argument;
}

}  // namespace attnsweep::workflows
