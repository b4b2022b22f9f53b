#include "runner/execute/publish.hpp"

#include <filesystem>
#include <optional>
#include <system_error>
#include <vector>

#include "storage/run_reader.hpp"
#include "storage/store.hpp"
#include "storage/trace_location.hpp"

namespace attnsweep::execute {
namespace {

namespace fs = std::filesystem;

// A plain sequential copy, written once and closed: what a bucket mount uploads.
void copy_whole_file(const fs::path& from, const fs::path& to) {
  std::error_code error;
  fs::copy_file(from, to, fs::copy_options::overwrite_existing, error);
  if (error) throw std::runtime_error("--publish: cannot copy " + from.string() + " to " + to.string() + ": " + error.message());
}

}  // namespace

Published publish_run(const std::string& db_path, std::int64_t run_id, const std::string& directory) {
  std::error_code error;
  fs::create_directories(directory, error);
  if (error) throw std::runtime_error("--publish: cannot create " + directory + ": " + error.message());
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
  const fs::path snapshot = db_path + ".publish";
  fs::remove(snapshot, error);
  try {
    storage::snapshot_database(db_path, snapshot.string());
    storage::point_traces_at(snapshot.string(), run_id, traces);
    published.database = (fs::path(directory) / fs::path(db_path).filename()).string();
    copy_whole_file(snapshot, published.database);
  } catch (...) {
    fs::remove(snapshot, error);
    throw;
  }
  fs::remove(snapshot, error);
  if (!traces.empty()) {
    fs::create_directories(fs::path(directory) / "traces", error);
    if (error) throw std::runtime_error("--publish: cannot create " + directory + "/traces: " + error.message());
  }
  for (const auto& trace : traces) {
    copy_whole_file(trace.file, fs::path(directory) / trace.stored);
    ++published.traces;
  }
  return published;
}

}  // namespace attnsweep::execute
