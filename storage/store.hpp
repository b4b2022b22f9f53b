#pragma once
// The one way results reach the database (SQLite, storage/schema.sql). Each
// finished case is committed in its own transaction, so a crash loses at most
// the case in flight.
#include <cstdint>
#include <memory>
#include <string>

#include "runner/config/measure_settings.hpp"
#include "runner/measure/case_result.hpp"
#include "runner/measure/environment.hpp"
#include "runner/plan/case.hpp"

namespace attnsweep::storage {

inline constexpr int kSchemaVersion = 1;

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

  const std::string& path() const { return path_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string path_;
};

std::string utc_now_iso8601();

}  // namespace attnsweep::storage
