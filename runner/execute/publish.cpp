#include "runner/execute/publish.hpp"

#include <filesystem>
#include <system_error>

#include "storage/run_reader.hpp"
#include "storage/store.hpp"

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
  // The snapshot is made on local disk (SQLite needs locking), then copied whole.
  const fs::path snapshot = db_path + ".publish";
  fs::remove(snapshot, error);
  storage::snapshot_database(db_path, snapshot.string());
  published.database = (fs::path(directory) / fs::path(db_path).filename()).string();
  try {
    copy_whole_file(snapshot, published.database);
  } catch (...) {
    fs::remove(snapshot, error);
    throw;
  }
  fs::remove(snapshot, error);
  bool made_traces = false;
  for (const auto& c : storage::RunReader(db_path).cases(run_id)) {
    if (c.trace_path.empty() || !fs::is_regular_file(c.trace_path)) continue;
    const fs::path traces = fs::path(directory) / "traces";
    if (!made_traces) {
      fs::create_directories(traces, error);
      if (error) throw std::runtime_error("--publish: cannot create " + traces.string() + ": " + error.message());
      made_traces = true;
    }
    copy_whole_file(c.trace_path, traces / fs::path(c.trace_path).filename());
    ++published.traces;
  }
  return published;
}

}  // namespace attnsweep::execute
