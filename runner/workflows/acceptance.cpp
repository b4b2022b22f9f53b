#include "runner/workflows/acceptance.hpp"

#include <fcntl.h>
#include <fnmatch.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "runner/common/copy_file.hpp"
#include "runner/common/errors.hpp"
#include "runner/common/text.hpp"
#include "runner/report/escaping.hpp"
#include "runner/workflows/good_nights.hpp"
#include "runner/workflows/night_window.hpp"
#include "runner/workflows/scratch_folder.hpp"

namespace attnsweep::workflows {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

// "20261205T031500Z" of a stamp or of nightly-<stamp>.db; empty when neither.
std::string stamp_named(const std::string& night) {
  std::string stamp = night;
  const std::string prefix = "nightly-", suffix = ".db";
  if (stamp.rfind(prefix, 0) == 0 && stamp.size() > prefix.size() + suffix.size() &&
      stamp.compare(stamp.size() - suffix.size(), suffix.size(), suffix) == 0) {
    stamp = stamp.substr(prefix.size(), stamp.size() - prefix.size() - suffix.size());
  }
  return stamp_time(stamp) ? stamp : "";
}

// The largest acceptance record read: one is a few hundred bytes.
constexpr std::uintmax_t kMostAcceptanceBytes = 1 << 20;

// A record's text: a regular file of bounded size only (a FIFO or a device named
// accept-*.json would block or never end). Throws std::runtime_error with why.
std::string acceptance_text(const std::string& path) {
  std::error_code error;
  const fs::file_status status = fs::status(path, error);
  if (error || !fs::is_regular_file(status)) throw std::runtime_error("not a regular file");
  const std::uintmax_t size = fs::file_size(path, error);
  if (error) throw std::runtime_error("cannot read it: " + error.message());
  if (size > kMostAcceptanceBytes) throw std::runtime_error("larger than 1 MiB");
  std::ifstream file(path, std::ios::binary);
  std::ostringstream text;
  text << file.rdbuf();
  if (!file) throw std::runtime_error("cannot read it");
  return text.str();
}

// An acceptance record read in its own words: what is wrong with the record,
// never the config reader's advice.
Acceptance parse_acceptance(const std::string& file, const std::string& text) {
  Json json;
  try {
    json = Json::parse(text);
  } catch (const Json::parse_error& error) {
    const std::string what = error.what();  // "[json.exception.parse_error.101] parse error at line 1, ..."
    const auto words = what.find("] ");
    throw std::runtime_error("not JSON: " + (words == std::string::npos ? what : what.substr(words + 2)));
  }
  if (!json.is_object()) throw std::runtime_error("not a JSON object");
  const auto text_of = [&](const char* key) -> std::optional<std::string> {
    const auto found = json.find(key);
    if (found == json.end() || !found->is_string()) return std::nullopt;
    return found->get<std::string>();
  };
  if (text_of("format") != std::optional<std::string>(kAcceptanceFormat)) {
    throw std::runtime_error(std::string("its format is not ") + kAcceptanceFormat);
  }
  Acceptance a;
  a.file = file;
  a.night = text_of("night").value_or("");
  if (!stamp_time(a.night)) throw std::runtime_error("its night is not a stamp");
  const auto cases = json.find("cases");
  if (cases == json.end() || !cases->is_array() || cases->empty()) throw std::runtime_error("it names no cases");
  for (const Json& pattern : *cases) {
    if (!pattern.is_string() || pattern.get<std::string>().empty()) throw std::runtime_error("its cases are not patterns");
    a.cases.push_back(pattern.get<std::string>());
  }
  a.reason = text_of("reason").value_or("");
  if (a.reason.empty()) throw std::runtime_error("it gives no reason");
  a.by = text_of("by").value_or("");
  a.at = text_of("at").value_or("");
  return a;
}

// Writes `text` into the new file `path`, once, sequentially, and closes it
// (what a bucket mount takes); never over an existing file (O_EXCL), never
// through a planted link, no temporary file anywhere (issue 55, item 3). An
// existing file is bad input (another acceptance this second); any other
// failure (a full disk, a read-only folder) is a runtime failure with the
// system's reason (item 12). A partial file is removed.
void write_new_file(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666);
  if (fd < 0) {
    if (errno == EEXIST) {
      throw BadInputError("accept: " + path + " already exists (another acceptance this second, or a file or link put "
                          "there?); nothing was recorded");
    }
    throw std::runtime_error("accept: cannot write " + path + ": " + std::strerror(errno) + "; nothing was recorded");
  }
  const auto fail = [&](int error) {
    ::close(fd);
    ::unlink(path.c_str());
    return std::runtime_error("accept: cannot write " + path + ": " + std::strerror(error) + "; nothing was recorded");
  };
  if (!write_all(fd, text.data(), text.size())) throw fail(errno);
  if (::close(fd) != 0) {
    const int error = errno;
    ::unlink(path.c_str());
    throw std::runtime_error("accept: cannot write " + path + ": " + std::strerror(error) + "; nothing was recorded");
  }
}

// The night to accept, judged as nightly judges the nights it compares with
// (issue 55, item 5): a night nightly skips (stamped in the future, off its
// run, unreadable, unfinished, measured beside another process) is refused;
// and each pattern must name a case of it (item 13).
void check_night_and_patterns(const std::string& history_dir, const std::string& stamp,
                              const std::vector<std::string>& patterns) {
  const ScratchFolder scratch;
  std::string why;
  const std::string night = "nightly-" + stamp + ".db";
  const std::optional<GoodNight> good = good_night(history_dir, night, scratch.path(), std::time(nullptr), why);
  if (!good) {
    throw BadInputError("--night: " + night + " is a night nightly skips: " + report::terminal_safe(text::first_line(why)) +
                        "; accept a night nightly compares with");
  }
  for (const std::string& pattern : patterns) {
    const bool matched = std::any_of(good->run.cases.begin(), good->run.cases.end(), [&](const compare::ComparedCase& c) {
      return ::fnmatch(pattern.c_str(), c.key.label().c_str(), 0) == 0;
    });
    if (!matched) {
      throw BadInputError("--cases: '" + report::terminal_safe(pattern) + "' matches no case of night " + stamp +
                          (good->run.cases.empty() ? std::string(" (it has none)")
                                                   : " (its cases are named like '" +
                                                         good->run.cases.front().key.label() + "')"));
    }
  }
}

}  // namespace

bool Acceptance::covers(const compare::CaseKey& key) const {
  const std::string label = key.label();
  return std::any_of(cases.begin(), cases.end(),
                     [&](const std::string& glob) { return ::fnmatch(glob.c_str(), label.c_str(), 0) == 0; });
}

Acceptance record_acceptance(const AcceptRequest& request) {
  if (!fs::is_directory(request.history_dir)) {
    throw BadInputError("accept: " + report::terminal_safe(request.history_dir) +
                        " is not a folder; give the nightly --history folder");
  }
  const std::string stamp = stamp_named(request.night);
  if (stamp.empty()) {
    throw BadInputError("--night: '" + report::terminal_safe(request.night) +
                        "' is no night; give its stamp (20261205T031500Z) or its file (nightly-20261205T031500Z.db)");
  }
  const std::vector<std::string> nights = night_files(request.history_dir);
  if (std::find(nights.begin(), nights.end(), "nightly-" + stamp + ".db") == nights.end()) {
    throw BadInputError("--night: no night nightly-" + stamp + ".db in " + report::terminal_safe(request.history_dir) +
                        (nights.empty() ? std::string(" (it has none)") : " (the newest is " + nights.back() + ")"));
  }
  if (request.cases.empty()) throw BadInputError("--cases: give at least one pattern of the cases the change is accepted for");
  for (const std::string& glob : request.cases) {
    if (glob.empty()) throw BadInputError("--cases: an empty pattern; give a glob on the case's label, e.g. 'sdpa_cudnn *'");
  }
  if (request.reason.empty()) throw BadInputError("--reason: say why the change is accepted, in words");
  check_night_and_patterns(request.history_dir, stamp, request.cases);
  Acceptance a;
  a.night = stamp;
  a.cases = request.cases;
  a.reason = request.reason;
  a.by = request.by;
  if (a.by.empty()) {
    const char* user = std::getenv("USER");
    a.by = user && *user ? user : "unknown";
  }
  const std::time_t now = std::time(nullptr);
  a.at = text::utc_now("%Y-%m-%dT%H:%M:%SZ");
  a.file = "accept-" + stamp_of_time(now) + ".json";
  const Json json{{"format", kAcceptanceFormat}, {"night", a.night}, {"cases", a.cases},
                  {"reason", a.reason},          {"by", a.by},       {"at", a.at}};
  write_new_file((fs::path(request.history_dir) / a.file).string(), json.dump(2) + "\n");
  return a;
}

std::vector<Acceptance> read_acceptances(const std::string& history_dir, std::string& skipped) {
  std::vector<Acceptance> out;
  std::error_code error;
  if (!fs::is_directory(history_dir, error)) return out;
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(history_dir, error)) {
    const std::string name = entry.path().filename().string();
    if (history_file_kind(name) == "an acceptance record") {
      files.push_back(name);
    }
  }
  std::sort(files.begin(), files.end());  // the name is when it was recorded
  for (const std::string& file : files) {
    try {
      out.push_back(parse_acceptance(file, acceptance_text((fs::path(history_dir) / file).string())));
    } catch (const std::exception& why) {
      skipped += "skipped " + file + ": not an acceptance (" + text::first_line(why.what()) + ")\n";
    }
  }
  return out;
}

const Acceptance* acceptance_for(const std::vector<Acceptance>& acceptances, const compare::CaseKey& key) {
  const Acceptance* newest = nullptr;
  for (const Acceptance& a : acceptances) {
    if (a.covers(key) && (!newest || a.night >= newest->night)) newest = &a;
  }
  return newest;
}

}  // namespace attnsweep::workflows
