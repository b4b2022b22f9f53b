#pragma once
// `attnsweep launch hf`: one HF Job per shard of a sweep, all mounting one
// bucket folder that holds the config and receives each shard's database and
// traces. Planning (checks, estimates, the exact hf command lines) is apart
// from starting, so --dry-run prints exactly what a launch would run.
// docs/hf-jobs.md.
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "runner/jobs/hf_cli.hpp"
#include "runner/jobs/hf_commands.hpp"
#include "runner/jobs/shard_estimate.hpp"

namespace attnsweep::jobs {

struct LaunchRequest {
  std::string config_path;
  std::string flavor;
  int shards = 0;
  std::string results;        // hf://buckets/ORG/NAME[/PREFIX]; PREFIX defaults to the sweep id
  std::string image;          // required unless from_source (kImageRequired)
  std::string timeout;        // "" for kDefaultJobTimeout
  std::string job_namespace;  // "" for the token's user
  std::string sweep_id;       // "" for <config name>-<UTC yyyymmddThhmmss>-<4 hex>
  bool pass_token = false;
  bool from_source = false;   // the stock image builds attnsweep from an archive of source_dir's HEAD
  std::string source_dir;     // with from_source: a folder of attnsweep's git checkout ("" for the current one)
  std::string schedule;       // "": start the shards now; else a schedule of `attnsweep nightly` (check_schedule)
};

struct LaunchPlan {
  JobSettings settings;
  std::string config_path;
  int sweep_cases = 0;
  std::int64_t timeout_seconds = 0;
  std::vector<ShardEstimate> estimates;                  // one per shard
  std::vector<std::string> upload;                       // hf buckets cp CONFIG .../config.yaml
  std::vector<std::vector<std::string>> jobs;            // hf jobs run ..., one per shard
  // --from-source only (else empty): git archive of the checkout's HEAD into a
  // temporary file, its upload as PREFIX/attnsweep-src.tar.gz, and notes for
  // the user (uncommitted changes, which the archive leaves out).
  std::string source_dir;                                // the checkout's top folder
  // The temporary file's name pattern, TMPDIR/attnsweep-src-<sweep id>-XXXXXX.tar.gz:
  // start_jobs makes a new file of it (XXXXXX random, mode 0600, never an
  // existing file or link) and removes it at the end.
  std::string archive_path;
  std::vector<std::string> archive;                      // git -C DIR archive ... HEAD, into that file
  std::vector<std::string> upload_source;                // hf buckets cp TMP .../attnsweep-src.tar.gz
  std::vector<std::string> warnings;
};

// No image of attnsweep is published: a launch names one, or builds in the job.
inline constexpr const char* kImageRequired =
    "--image IMAGE is required (no public attnsweep image exists): build one with `make image`, push it to a "
    "registry HF Jobs pulls from (Docker Hub: docker.io/ORG/attnsweep:TAG, or a Space), and pass --image; or use "
    "--from-source to build attnsweep in the job";

// The flavors a launch accepts, and whose list it is (said when a flavor is refused).
struct FlavorList {
  std::vector<std::string> names;
  std::string source;
};

// Checks everything and builds the command lines; runs nothing. Throws
// BadInputError (one line) for no --image without from_source (kImageRequired,
// checked first), a bad --results URL, --sweep-id, --timeout or
// --shards, a flavor not in `flavors()`, a config that does not load, and a
// shard expected to outrun the timeout (with the estimate and the --shards or
// --timeout that would fit). With from_source: --image given too, --source not
// a git checkout (or its HEAD without container/job-from-source.sh), git not on
// PATH; it runs git to check (read-only), nothing else. A --source without
// --from-source is refused.
// `flavors` is asked only once the checks that need no list have passed (a
// launch asks hf: bad input is refused before any network call).
LaunchPlan plan_launch(const LaunchRequest& request, const std::function<FlavorList()>& flavors);

// The flavors hf knows (`hf jobs hardware`, given kHfListSeconds) when it
// answers, else known_flavors().
FlavorList available_flavors(const HfCli* hf);
// known_flavors(), for a dry run: it makes no network call, so asks hf nothing.
FlavorList built_in_flavors();

// A sweep id is a job label's value and a bucket folder's name: letters,
// digits, '_' and '-', 1 to 64 characters, starting with a letter or digit.
void check_sweep_id(const std::string& sweep_id);

struct StartedJob {
  ShardSpec shard;
  std::string job_id;
};

// A launch that stopped: what was started (still running) and what failed.
class LaunchStopped : public std::runtime_error {
 public:
  LaunchStopped(const std::string& message, std::vector<StartedJob> started)
      : std::runtime_error(message), started_(std::move(started)) {}
  const std::vector<StartedJob>& started() const { return started_; }

 private:
  std::vector<StartedJob> started_;
};

struct LaunchEvents {
  std::function<void()> config_uploaded;
  std::function<void()> source_uploaded;  // --from-source: the archive is in the bucket
  std::function<void(const StartedJob&)> job_started;
  std::function<void(const std::string& what, const std::string& reason, double pause_seconds)> retrying;
};

// With --from-source, makes the source archive first (nothing is uploaded
// when git fails) and uploads it after the config, removing the local file.
// The archive's file is made private (archive_path) and written through its
// descriptor, so a file or link planted in TMPDIR is neither followed nor used.
// Uploads the config, then submits the jobs one by one, each tried again once
// after a pause when hf fails. Throws LaunchStopped naming the shards started
// (with their job ids) and the one that failed.
std::vector<StartedJob> start_jobs(const HfCli& hf, const LaunchPlan& plan, const LaunchEvents& events);

struct JobOutcome {
  StartedJob job;
  JobStage stage;  // stage "" when hf could not tell
};

// `hf jobs wait` on every job (stopped after `time_limit_seconds`: the jobs'
// timeout plus kHfWaitMarginSeconds), then each one's final stage (from what
// wait printed, else `hf jobs inspect`; a job still running when wait was
// stopped keeps its stage then, RUNNING or SCHEDULING).
std::vector<JobOutcome> wait_for_jobs(const HfCli& hf, const std::vector<StartedJob>& started,
                                      const std::string& job_namespace, double time_limit_seconds);

}  // namespace attnsweep::jobs
