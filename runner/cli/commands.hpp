#pragma once
// The subcommands, as plain functions the thin main() hands off to. Each
// returns an exit code (runner/common/errors.hpp); errors are printed here.
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
int query_command(const std::string& db_path, const std::string& sql);
int plan_command(const std::string& config_path, const std::string& device);
int variants_command(const std::string& device);

}  // namespace attnsweep::cli
