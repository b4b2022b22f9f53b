#pragma once
// The one way results reach the database (SQLite, storage/schema.sql). Each
// finished case is committed in its own transaction, so a crash loses at most
// the case in flight. Reading them back is storage/run_reader.hpp's job.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "runner/common/identities.hpp"
#include "runner/config/measure_settings.hpp"
#include "runner/device/environment.hpp"
#include "runner/measure/case_result.hpp"
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

class Store {
 public:
  // Opens (creating when absent) the database at `path` and brings its schema
  // to the current version. Throws BadInputError when the file is not an
  // attnsweep database, is newer than this program, or cannot be written.
  explicit Store(const std::string& path);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // A new run, status running, started now; returns its run_id.
  std::int64_t begin_run(const RunRecord& run);
  // One finished case with its kernels, ops and samples, in one transaction;
  // returns its case_id. Throws SQLite::Exception (and stores nothing) when
  // the schema refuses the row, e.g. a plan_index the run already has.
  std::int64_t add_case(std::int64_t run_id, const Case& c, const CaseResult& result);
  // Sets the run's final status and finished_at.
  void finish_run(std::int64_t run_id, RunStatus status);
  // --resume: the run is running again, with no finished_at.
  void reopen_run(std::int64_t run_id);

  const std::string& path() const { return path_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string path_;
};

std::string utc_now_iso8601();

}  // namespace attnsweep::storage
