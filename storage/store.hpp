#pragma once
// The one way results reach the database (SQLite, storage/schema.sql). Each
// finished case is committed in its own transaction, so a crash loses at most
// the case in flight.
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "runner/config/measure_settings.hpp"
#include "runner/measure/case_result.hpp"
#include "runner/measure/environment.hpp"
#include "runner/plan/case.hpp"

namespace attnsweep::storage {

inline constexpr int kSchemaVersion = 4;

struct RunRecord {
  std::string name;
  std::string description;
  std::string config_path;
  std::string config_yaml;
  std::string config_sha256;
  EnvironmentInfo environment;
  std::uint64_t seed = 0;
  std::string timing_protocol;
  std::string flop_convention;
  MeasureSettings measure;
  int planned_cases = 0;
  bool isolate = false;
  std::optional<double> ceiling_bf16_tflops;  // measured at run start on the GPU
  std::optional<double> ceiling_copy_gbps;
};

// What --resume needs to know about an earlier run.
struct StoredRun {
  std::int64_t run_id = 0;
  std::string status;
  std::string config_sha256;
  std::string device;
  int planned_cases = 0;
};

class Store {
 public:
  // Opens (creating when absent) the database at `path` and brings its schema
  // to the current version. Throws BadInputError when the file is not an
  // attnsweep database, is newer than this program, or cannot be written.
  explicit Store(const std::string& path);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  std::int64_t begin_run(const RunRecord& run);
  std::int64_t add_case(std::int64_t run_id, const Case& c, const CaseResult& result);
  void finish_run(std::int64_t run_id, const std::string& status);

  // The run with this id, or the latest run when none is given.
  std::optional<StoredRun> find_run(std::optional<std::int64_t> run_id);
  std::set<int> stored_plan_indexes(std::int64_t run_id);
  void reopen_run(std::int64_t run_id);
  // Every stored case of a run, in plan order, as much as the summary table needs.
  std::vector<std::pair<Case, CaseResult>> load_cases(std::int64_t run_id);

  const std::string& path() const { return path_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string path_;
};

std::string utc_now_iso8601();

}  // namespace attnsweep::storage
