#include "runner/workflows/acceptance.hpp"

#include <fnmatch.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <filesystem>

#include "runner/common/copy_file.hpp"
#include "runner/common/errors.hpp"
#include "runner/common/temp_folder.hpp"
#include "runner/common/text.hpp"
#include "runner/common/whole_file.hpp"
#include "runner/config/config.hpp"
#include "runner/workflows/good_nights.hpp"
#include "runner/workflows/night_window.hpp"

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

Acceptance parse_acceptance(const std::string& file, const std::string& text) {
  const Json json = Json::parse(text);
  if (json.value("format", "") != kAcceptanceFormat) throw std::runtime_error(std::string("its format is not ") + kAcceptanceFormat);
  Acceptance a;
  a.file = file;
  a.night = json.at("night").get<std::string>();
  a.cases = json.at("cases").get<std::vector<std::string>>();
  a.reason = json.at("reason").get<std::string>();
  a.by = json.value("by", "");
  a.at = json.value("at", "");
  if (!stamp_time(a.night)) throw std::runtime_error("its night '" + a.night + "' is no stamp");
  if (a.cases.empty()) throw std::runtime_error("it names no cases");
  return a;
}

}  // namespace

bool Acceptance::covers(const compare::CaseKey& key) const {
  const std::string label = key.label();
  return std::any_of(cases.begin(), cases.end(),
                     [&](const std::string& glob) { return ::fnmatch(glob.c_str(), label.c_str(), 0) == 0; });
}

Acceptance record_acceptance(const AcceptRequest& request) {
  if (!fs::is_directory(request.history_dir)) {
    throw BadInputError("accept: " + request.history_dir + " is not a folder; give the nightly --history folder");
  }
  const std::string stamp = stamp_named(request.night);
  if (stamp.empty()) {
    throw BadInputError("--night: '" + request.night + "' is no night; give its stamp (20261205T031500Z) or its file "
                        "(nightly-20261205T031500Z.db)");
  }
  const std::vector<std::string> nights = night_files(request.history_dir);
  if (std::find(nights.begin(), nights.end(), "nightly-" + stamp + ".db") == nights.end()) {
    throw BadInputError("--night: no night nightly-" + stamp + ".db in " + request.history_dir +
                        (nights.empty() ? std::string(" (it has none)") : " (the newest is " + nights.back() + ")"));
  }
  if (request.cases.empty()) throw BadInputError("--cases: give at least one pattern of the cases the change is accepted for");
  for (const std::string& glob : request.cases) {
    if (glob.empty()) throw BadInputError("--cases: an empty pattern; give a glob on the case's label, e.g. 'sdpa_cudnn *'");
  }
  if (request.reason.empty()) throw BadInputError("--reason: say why the change is accepted, in words");
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
  // Written locally, then copied in whole and never over an existing file (a bucket mount).
  const std::string local = (fs::path(temp_folder()) / ("attnsweep-" + a.file)).string();
  write_whole_file(local, json.dump(2) + "\n", "the acceptance");
  try {
    copy_to_new_file(local, (fs::path(request.history_dir) / a.file).string());
  } catch (const std::exception& error) {
    std::error_code ignored;
    fs::remove(local, ignored);
    throw BadInputError(std::string(error.what()) + " (another acceptance this second? nothing was recorded)");
  }
  std::error_code ignored;
  fs::remove(local, ignored);
  return a;
}

std::vector<Acceptance> read_acceptances(const std::string& history_dir, std::string& skipped) {
  std::vector<Acceptance> out;
  std::error_code error;
  if (!fs::is_directory(history_dir, error)) return out;
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(history_dir, error)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("accept-", 0) == 0 && name.size() > 12 && name.compare(name.size() - 5, 5, ".json") == 0) {
      files.push_back(name);
    }
  }
  std::sort(files.begin(), files.end());  // the name is when it was recorded
  for (const std::string& file : files) {
    try {
      // A regular file of bounded size only: a FIFO or a device named accept-*.json would block or never end.
      out.push_back(parse_acceptance(file, read_config_file((fs::path(history_dir) / file).string())));
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
