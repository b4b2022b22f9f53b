#pragma once
// The subcommands, as plain functions the thin main() hands off to, one file
// each (run_command.cpp, ...). Each parses nothing itself beyond turning option
// text into typed values, calls the layer that does the work, prints, and
// returns an exit code (runner/common/errors.hpp); errors become codes in
// guarded.hpp.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runner/workflows/acceptance.hpp"

namespace attnsweep::cli {

struct RunOptions {
  std::string config_path;
  std::string db_path = "results.db";
  std::string device;      // empty: the config's device (default auto)
  std::string traces_dir;  // non-empty: write traces there (implies traces on)
  bool resume = false;     // continue an earlier run instead of starting one
  std::string resume_run;  // "latest" or a run id
  bool isolate = false;    // one worker process per case
  std::optional<std::string> shard;  // --shard K/N
  std::optional<int> shards;         // --shards N (with JOB_COMPLETION_INDEX)
  std::string sweep_id;              // --sweep-id
  std::optional<std::string> gpus;   // --gpus all|0,1,...
  std::string publish_dir;           // --publish DIR
  double progress_interval_seconds = 30;  // --progress-interval: off a terminal, a progress line this often; 0: none
};
int run_command(const RunOptions& options);

struct PlanOptions {
  std::string config_path;
  std::string device;
  std::optional<std::string> shard;  // --shard K/N: list that part
  std::optional<int> shards;
};
int plan_command(const PlanOptions& options);
int variants_command(const std::string& device);
// `attnsweep env [--device D]`: the environment fingerprint as JSON.
int env_command(const std::string& device);

// `attnsweep nightly CONFIG --history DIR | --baseline DB[:RUN]` (docs/reproducibility.md).
struct NightlyOptions {
  std::string config_path;
  std::string history_dir;
  std::string baseline;
  std::string db_path;       // empty: nightly-<UTC stamp>.db in the current folder
  std::string summary_path;  // empty: the database's path with .md
  std::string json_path;     // --summary-json; empty: none
  std::string device;
  std::string threshold = "5";
  std::string min_change_us = "2";
  std::string window = "5";       // --window N: good nights in the time baseline (--history only)
  std::string consecutive = "2";  // --consecutive K: nights in a row before a time regression fails
  bool window_given = false, consecutive_given = false;
};
int nightly_command(const NightlyOptions& options);

// `attnsweep history DIR` (docs/reproducibility.md, "History").
struct HistoryOptions {
  std::string history_dir;
  std::string format = "table";  // table, csv, json or markdown
  std::string html_path;         // --html FILE: also write the page of charts
  std::string last = "30";       // --last N: the newest N nights
  std::string by;                // --by torch,cudnn,...: the nights' version facts as columns
  bool culprits = false;         // --culprits: the changes and the versions that changed with them
  std::string threshold = "5";
  std::string min_change_us = "2";
};
int history_command(const HistoryOptions& options);

// The options are the request itself: each is one of its fields, as given.
using AcceptOptions = workflows::AcceptRequest;
int accept_command(const AcceptOptions& options);

struct QueryOptions {
  std::string db_path;
  std::string sql;
  std::string format = "table";  // table, csv, json or markdown
};
int query_command(const QueryOptions& options);

// `attnsweep merge OUT.db IN.db...`: shard databases of one sweep into one run.
struct MergeOptions {
  std::string out_path;
  std::vector<std::string> inputs;
};
int merge_command(const MergeOptions& options);

// `attnsweep compare BASELINE[:RUN] CANDIDATE[:RUN]` (docs/compare.md): exit 0
// when nothing regressed, 1 on a regression, 2 on bad input.
struct CompareOptions {
  std::string baseline;          // DATABASE[:RUN]
  std::string candidate;         // DATABASE[:RUN]
  std::string format = "text";   // text, markdown or json
  std::string threshold = "5";   // percent, > 0 and < 100
  std::string min_change_us = "2";  // microseconds, >= 0
};
int compare_command(const CompareOptions& options);

// `attnsweep report DB`: one run as a self-contained HTML page with charts, or
// as markdown tables (runner/run_report, docs/report.md).
struct ReportOptions {
  std::string db_path;
  std::string run = "latest";  // a run id or latest
  std::string compare_with;    // OTHER_DB[:RUN]
  std::string output;          // -o; empty: the default for the format
  std::string format = "html"; // html or markdown
  std::string trace_url_base;  // where the traces are served, for Perfetto links
};
int report_command(const ReportOptions& options);

// `attnsweep launch hf CONFIG ...`: one Hugging Face Job per shard (docs/hf-jobs.md).
struct LaunchOptions {
  std::string backend;  // "hf"
  std::string config_path;
  std::string flavor;
  std::optional<int> shards;  // required, except with --schedule (1)
  std::string results;  // hf://buckets/ORG/NAME[/PREFIX]
  std::string image;
  std::string timeout;
  std::string job_namespace;
  std::string sweep_id;
  bool token = false;
  bool dry_run = false;
  bool wait = false;
  bool from_source = false;  // the stock PyTorch image builds attnsweep from an archive of the checkout
  std::string source_dir;    // --source DIR: that checkout ("" for the current folder's)
  std::string schedule;      // --schedule: a schedule of nightly runs instead of one launch
};
int launch_command(const LaunchOptions& options);

// `attnsweep collect hf://buckets/ORG/NAME/PREFIX OUT.db [--keep DIR]`.
struct CollectOptions {
  std::string source;
  std::string out_path;
  std::string keep_dir;
};
int collect_command(const CollectOptions& options);

// The hidden `worker` subcommand of --isolate.
struct WorkerOptions {
  bool probe = false;  // print the device's environment as JSON and exit
  bool serve = false;  // --gpus: serve cases of the run on one device, read from stdin
  bool no_ceilings = false;  // with serve: the device's ceilings are stored already
  std::string config_sha256;
  std::string db_path;
  std::int64_t run_id = 0;
  int plan_index = 0;
  std::string device;
  std::string trace_path;
  std::string op_library_identities;  // the parent's OpLibraryWatch::identities() (runner/execute/op_library_watch.hpp)
  // The op library check before a sweep (runner/execute/op_library_check.hpp): load these, in order.
  std::vector<std::string> op_library_files;
};
int worker_command(const WorkerOptions& options);

}  // namespace attnsweep::cli
