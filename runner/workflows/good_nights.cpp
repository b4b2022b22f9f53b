#include "runner/workflows/good_nights.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <regex>

#include "runner/common/errors.hpp"
#include "runner/common/same_file.hpp"
#include "runner/workflows/night_window.hpp"

namespace attnsweep::workflows {
namespace {

namespace fs = std::filesystem;

// A reader's refusal as the summary shows it: the history's name for the file
// (`original`), not the scratch copy's, and without advice meant for `run --db`.
std::string skip_reason(std::string message, const std::string& copy, const std::string& original) {
  for (std::size_t at = message.find(copy); at != std::string::npos; at = message.find(copy, at + original.size())) {
    message.replace(at, copy.size(), original);
  }
  return storage::without_db_advice(message);
}

// Cases of a night measured while another process computed on its GPU.
int shared_cases(const compare::RunCases& run) {
  int shared = 0;
  for (const compare::ComparedCase& c : run.cases) {
    shared += c.row.status == CaseStatus::ok && c.row.other_processes.value_or(0) > 0;
  }
  return shared;
}

// The night copied to `copy`, opened and judged by its own gate: the night when
// it is good, else nothing with the reason in `why`. `device_kind` empty: any.
std::optional<GoodNight> night_if_good(const std::string& night, const std::string& copy,
                                       std::optional<DeviceKind> device_kind, std::string& why) {
  // An older schema (the night before an upgrade) is read through a migrated copy.
  auto database = std::make_unique<storage::ReadableDatabase>(copy);
  const auto run = database->reader().latest_run();
  if (run) database->reader().check_run(run->run_id);  // a damaged night is skipped, by its value (issue 33)
  const std::string not_its_night = run ? night_run_problem(night, run->started_at) : std::string();
  if (!not_its_night.empty()) {
    why = not_its_night;
    return std::nullopt;
  }
  // A night measured beside another process on its GPU cannot be a baseline:
  // every case compared with it would go unjudged (issue 21, item 4).
  if (run && run->status == RunStatus::done && run->device.kind() == device_kind.value_or(run->device.kind())) {
    compare::RunCases cases = compare::read_run_cases(database->reader(), run->run_id);
    const int shared = shared_cases(cases);
    if (shared == 0) return GoodNight{night, std::move(database), std::move(cases)};
    why = std::to_string(shared) + " of its cases were measured while another process computed on the GPU";
  } else if (run && run->status == RunStatus::done) {
    why = "it ran on " + run->device.to_string() + ", tonight on " + (*device_kind == DeviceKind::cuda ? "cuda" : "cpu");
  } else {
    why = std::string("its latest run is ") + (run ? to_string(run->status) : "absent");
  }
  return std::nullopt;
}

// `night` of `history_dir` copied into `scratch_dir` and judged; the copy is
// kept only for a good night.
// A copy that fails is the night's fault for nightly (skipped, with why), the
// machine's for accept (`copy_failure_throws`: a full TMPDIR is exit 1, not a bad night).
std::optional<GoodNight> judge_night(const std::string& history_dir, const std::string& night,
                                     const std::string& scratch_dir, std::optional<DeviceKind> device_kind,
                                     std::time_t now, std::string& why, bool copy_failure_throws = false) {
  const std::string original = history_dir + "/" + night;
  const std::string copy = scratch_dir + "/" + night;
  why = night_name_problem(night, now);
  if (!why.empty()) return std::nullopt;
  std::error_code error;
  fs::copy_file(original, copy, fs::copy_options::overwrite_existing, error);
  if (error) {
    why = "cannot copy it (" + error.message() + ")";
    if (copy_failure_throws) throw std::runtime_error("cannot copy " + original + " into " + scratch_dir + ": " + error.message());
    return std::nullopt;
  }
  try {
    std::optional<GoodNight> judged = night_if_good(night, copy, device_kind, why);
    if (judged) return judged;
  } catch (const std::exception& problem) {
    why = skip_reason(problem.what(), copy, original);
  }
  fs::remove(copy, error);  // only the good nights' copies are kept
  return std::nullopt;
}

}  // namespace

std::vector<std::string> night_files(const std::string& history_dir) {
  static const std::regex name(R"(nightly-[0-9]{8}T[0-9]{6}Z\.db)");
  std::vector<std::string> nights;
  std::error_code listing;
  if (!fs::exists(history_dir, listing)) return nights;  // created when tonight's files go in
  for (const auto& entry : fs::directory_iterator(history_dir, listing)) {
    const std::string file = entry.path().filename().string();
    std::error_code kind;
    if (entry.is_regular_file(kind) && std::regex_match(file, name)) nights.push_back(file);
  }
  if (listing) throw BadInputError(history_dir + ": cannot list the --history folder: " + listing.message());
  std::sort(nights.begin(), nights.end());  // oldest first: the name is the UTC stamp
  return nights;
}

std::string history_file_kind(const std::string& name) {
  const auto ends_with = [&](const std::string& suffix) {
    return name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (name.rfind("nightly-", 0) == 0 && ends_with(".db")) return "a night";
  if (name.rfind("nightly-", 0) == 0 && ends_with(".md")) return "a night's summary";
  if (name.rfind("accept-", 0) == 0 && ends_with(".json")) return "an acceptance record";
  return "";
}

void refuse_history_file(const std::string& output, const std::string& option, const std::string& history_dir) {
  if (history_dir.empty()) return;
  std::error_code error;
  const fs::path written = fs::absolute(output, error);
  // Where the name leads, links followed: a link to a night is the night.
  const fs::path resolved = fs::weakly_canonical(written, error);
  for (const fs::path& path : {written, error ? written : resolved}) {
    const std::string kind = history_file_kind(path.filename().string());
    if (!kind.empty() && same_file(path.parent_path().string(), history_dir)) {
      throw BadInputError(option + " " + output + ": is named as " + kind + " of the history " + history_dir +
                          " (nightly-*.db, nightly-*.md and accept-*.json there are read as such); name another file");
    }
  }
  // A hard link elsewhere to a file of the history: only a file with more than one link can be one.
  struct stat info {};
  if (::stat(output.c_str(), &info) != 0 || !S_ISREG(info.st_mode) || info.st_nlink < 2) return;
  for (const auto& entry : fs::directory_iterator(history_dir, error)) {
    const std::string kind = history_file_kind(entry.path().filename().string());
    struct stat stored {};
    if (!kind.empty() && ::stat(entry.path().c_str(), &stored) == 0 && stored.st_dev == info.st_dev &&
        stored.st_ino == info.st_ino) {
      throw BadInputError(option + " " + output + ": is " + kind + " of the history " + history_dir + " (" +
                          entry.path().filename().string() + ", another name of the same file); name another file");
    }
  }
}

std::vector<GoodNight> good_nights(const std::string& history_dir, const std::string& scratch_dir,
                                   DeviceKind device_kind, int count, std::time_t now, std::string& skipped) {
  std::vector<GoodNight> good;
  std::vector<std::string> nights = night_files(history_dir);
  std::reverse(nights.begin(), nights.end());  // newest first
  for (const auto& night : nights) {
    if (static_cast<int>(good.size()) >= count) break;
    std::string why;
    std::optional<GoodNight> judged = judge_night(history_dir, night, scratch_dir, device_kind, now, why);
    if (judged) {
      good.push_back(std::move(*judged));
    } else {
      skipped += "skipped " + night + ": " + why + "\n";
    }
  }
  return good;
}

std::optional<GoodNight> good_night(const std::string& history_dir, const std::string& night,
                                    const std::string& scratch_dir, std::time_t now, std::string& why) {
  return judge_night(history_dir, night, scratch_dir, std::nullopt, now, why, /*copy_failure_throws=*/true);
}

}  // namespace attnsweep::workflows
