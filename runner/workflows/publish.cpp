#include "runner/workflows/publish.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include "runner/common/errors.hpp"
#include "runner/common/same_file.hpp"
#include "runner/storage/database_files.hpp"
#include "runner/storage/run_reader.hpp"
#include "runner/storage/store.hpp"
#include "runner/storage/trace_location.hpp"

namespace attnsweep::workflows {
namespace {

namespace fs = std::filesystem;

// The mode a new file gets here: 0666 less the umask, read from /proc (umask() can
// only read it by setting it, which another thread creating a file would see).
fs::perms new_file_mode() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("Umask:", 0) == 0) return static_cast<fs::perms>(0666 & ~std::stoi(line.substr(6), nullptr, 8));
  }
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return static_cast<fs::perms>(0666 & ~mask);
}

// A plain sequential copy, written once and closed: what a bucket mount uploads. Its
// mode is a new file's (copy_file gives it the source's: the private snapshot's 0600).
void copy_whole_file(const fs::path& from, const fs::path& to) {
  std::error_code error;
  fs::copy_file(from, to, fs::copy_options::overwrite_existing, error);
  if (!error) fs::permissions(to, new_file_mode(), fs::perm_options::replace, error);
  if (error) throw std::runtime_error("--publish: cannot copy " + from.string() + " to " + to.string() + ": " + error.message());
}

// An empty file beside the database that nobody else has (O_EXCL, 0600): VACUUM INTO writes into it.
std::string private_snapshot_file(const std::string& db_path) {
  const fs::path db(db_path);
  for (int attempt = 0; attempt < 100; ++attempt) {
    const std::string file = (db.parent_path() / ("." + db.filename().string() + ".publish-" +
                                                  storage::random_uuid().substr(0, 8))).string();
    const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd >= 0) {
      ::close(fd);
      return file;
    }
    if (errno != EEXIST) throw std::runtime_error("--publish: cannot create a copy beside " + db_path + ": " + std::strerror(errno));
  }
  throw std::runtime_error("--publish: no free name for a copy beside " + db_path);
}

}  // namespace

void check_publish_target(const std::string& db_path, const std::string& directory) {
  const std::string target = (fs::path(directory) / fs::path(db_path).filename()).string();
  const std::string refused = "--publish " + directory + ": ";
  if (same_file(target, db_path) ||
      (!fs::exists(target) && fs::weakly_canonical(fs::absolute(target)) == fs::weakly_canonical(fs::absolute(db_path)))) {
    throw BadInputError(refused + target + " is the database itself (--db " + db_path + "); copying over it would "
                        "destroy it: publish into another folder");
  }
  struct stat info {};
  if (::lstat(target.c_str(), &info) != 0) return;  // nothing there to lose
  if (!S_ISREG(info.st_mode)) {
    throw BadInputError(refused + target + " is there already and is not a regular file; remove it, or publish "
                        "into another folder");
  }
  const std::optional<std::set<std::string>> there = storage::stored_run_uuids(target);
  std::set<std::string> here;
  try {
    if (fs::exists(db_path)) {
      for (const auto& run : storage::RunReader(db_path).runs()) here.insert(run.run_uuid);
    }
  } catch (const BadInputError&) {
    // Not a database yet (an empty file): it lacks everything; the store refuses anything worse.
  }
  bool earlier_copy = there.has_value();
  if (there) {
    for (const auto& uuid : *there) earlier_copy = earlier_copy && here.count(uuid) > 0;
  }
  if (!earlier_copy) {
    throw BadInputError(refused + target + " is there already and " +
                        (there ? "holds runs that " + db_path + " lacks" : std::string("is not an attnsweep database")) +
                        "; it is never replaced: remove it, or publish into another folder");
  }
}

Published publish_run(const std::string& db_path, std::int64_t run_id, const std::string& directory) {
  std::error_code error;
  fs::create_directories(directory, error);
  if (error) throw std::runtime_error("--publish: cannot create " + directory + ": " + error.message());
  check_publish_target(db_path, directory);  // again: DIR may have changed during the sweep
  Published published;
  // The traces that exist, and where the published copy finds them: traces/<name> beside it.
  std::vector<storage::PublishedTrace> traces;
  {
    const storage::RunReader reader(db_path);
    const std::optional<storage::RunRow> run = reader.run(run_id);
    for (const auto& c : reader.cases(run_id)) {
      const std::string file = storage::trace_file_of(db_path, run ? run->trace_path_base : "", c.trace_path);
      if (file.empty() || !fs::is_regular_file(file)) continue;
      traces.push_back({c.case_id, file, (fs::path("traces") / fs::path(file).filename()).string()});
    }
  }
  // The snapshot is made on local disk (SQLite needs locking), then copied whole.
  const std::string snapshot = private_snapshot_file(db_path);
  try {
    storage::snapshot_database(db_path, snapshot);
    storage::point_traces_at(snapshot, run_id, traces);
    published.database = (fs::path(directory) / fs::path(db_path).filename()).string();
    copy_whole_file(snapshot, published.database);
  } catch (...) {
    storage::remove_database_files(snapshot);
    throw;
  }
  storage::remove_database_files(snapshot);
  if (!traces.empty()) {
    fs::create_directories(fs::path(directory) / "traces", error);
    if (error) throw std::runtime_error("--publish: cannot create " + directory + "/traces: " + error.message());
  }
  for (const auto& trace : traces) {
    const fs::path to = fs::path(directory) / trace.stored;
    // Traces written straight into DIR/traces (--traces DIR/traces) are there already.
    if (!same_file(trace.file, to.string())) copy_whole_file(trace.file, to);
    ++published.traces;
  }
  return published;
}

execute::RunEnd publish_at_end(const std::string& directory, std::optional<Published>& published) {
  execute::RunEnd at_end;
  at_end.check = [directory](const std::string& db_path) { check_publish_target(db_path, directory); };
  at_end.ended = [directory, &published](const std::string& db_path, std::int64_t run_id) {
    published = publish_run(db_path, run_id, directory);
  };
  return at_end;
}

}  // namespace attnsweep::workflows
