#pragma once
// The subcommands, as plain functions the thin main() hands off to, one file
// each (run_command.cpp, ...). Each parses nothing itself beyond turning option
// text into typed values, calls the layer that does the work, prints, and
// returns an exit code (runner/common/errors.hpp); errors become codes in
// guarded.hpp.
#include <cstdint>
#include <optional>
#include <string>

namespace attnsweep::cli {

struct RunOptions {
  std::string config_path;
  std::string db_path = "results.db";
  std::string device;      // empty: the config's device (default auto)
  std::string traces_dir;  // non-empty: write traces there (implies traces on)
  bool resume = false;     // continue an earlier run instead of starting one
  std::string resume_run;  // "latest" or a run id
  bool isolate = false;    // one worker process per case
};
int run_command(const RunOptions& options);

int plan_command(const std::string& config_path, const std::string& device);
int variants_command(const std::string& device);

struct QueryOptions {
  std::string db_path;
  std::string sql;
  std::string format = "table";  // table, csv, json or markdown
};
int query_command(const QueryOptions& options);

// The hidden `worker` subcommand of --isolate.
struct WorkerOptions {
  bool probe = false;  // print the device's environment as JSON and exit
  std::string config_sha256;
  std::string db_path;
  std::int64_t run_id = 0;
  int plan_index = 0;
  std::string device;
  std::string trace_path;
};
int worker_command(const WorkerOptions& options);

}  // namespace attnsweep::cli
