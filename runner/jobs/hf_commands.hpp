#pragma once
// The `hf` command lines of a launch (huggingface_hub >= 1.24), as argument
// vectors starting with "hf", and readers of what hf prints back. Pure: nothing
// here runs anything. docs/hf-jobs.md.
//
//   hf buckets cp CONFIG hf://buckets/ORG/NAME/PREFIX/config.yaml
//   hf jobs run --flavor F --timeout T [--namespace NS] -e ATTNSWEEP_SWEEP_ID=ID
//       [-s HF_TOKEN] -e ATTNSWEEP_IMAGE=IMAGE -v hf://buckets/ORG/NAME/PREFIX:/results
//       -l attnsweep-sweep=ID -l attnsweep-shard=K -d -- IMAGE
//       attnsweep run /results/config.yaml --shard K/N --sweep-id ID
//       --db /tmp/attnsweep/shard-K-of-N.db --traces /tmp/attnsweep/traces --publish /results
//       [--gpus all]   (a flavor of several GPUs)
//   Every hf option comes before "--": hf reads options after the image too
//   (`IMAGE attnsweep run c.yaml --timeout 5` would give hf a timeout), and
//   "--" ends its options, so all that follows is the image and the job's command.
//   with --from-source (the stock image builds attnsweep in the job):
//   git -C SOURCE archive --format=tar.gz HEAD > TMP   (TMP a new private file)
//   hf buckets cp TMP hf://buckets/ORG/NAME/PREFIX/attnsweep-src.tar.gz
//   hf jobs run ... -e ATTNSWEEP_GIT_SHA=SHA -e ATTNSWEEP_IMAGE=debian:bookworm-slim
//       ... -d -- debian:bookworm-slim
//       bash -c BOOTSTRAP job-from-source /results/config.yaml --shard K/N ... --publish /results
//   hf jobs wait --format json [--namespace NS] ID...
//   hf jobs inspect --format json [--namespace NS] ID...
//   hf buckets sync hf://buckets/ORG/NAME/PREFIX DIR [--include shard-*.db]
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runner/jobs/bucket.hpp"
#include "runner/plan/shard.hpp"

namespace attnsweep::jobs {

// Where a job sees its bucket folder (config.yaml in, shards and traces out).
inline constexpr const char* kMountPath = "/results";
// Where a job keeps its database while it runs: the job's own disk, since SQLite
// must never run on the mount (no file locking; files upload when closed).
inline constexpr const char* kJobWorkDirectory = "/tmp/attnsweep";
// Labels: `hf jobs ps --label attnsweep-sweep=ID` lists a launch's jobs.
inline constexpr const char* kSweepLabel = "attnsweep-sweep";
inline constexpr const char* kShardLabel = "attnsweep-shard";
inline constexpr const char* kConfigFileName = "config.yaml";
// A schedule's jobs carry this label (the schedule's name, the sweep id).
inline constexpr const char* kNightlyLabel = "attnsweep-nightly";
// Inside a scheduled job: the night's database and summary on the job's disk;
// attnsweep nightly copies them into the mounted folder (its --history). Straight
// in /tmp, which every image has (run does not create a database's folder).
inline constexpr const char* kNightlyDatabase = "/tmp/attnsweep-nightly.db";
inline constexpr const char* kNightlySummary = "/tmp/attnsweep-nightly.md";
// --from-source: plain Debian 12, the base container/Dockerfile starts from; the
// job installs what the image's build stage installs (container/build_deps.sh:
// Debian packages, the torch wheel, PyPI's nvcc) and builds attnsweep from the
// source archive in the bucket (container/job-from-source.sh). Not the PyTorch
// image: it is Ubuntu 22.04, which has no libsqlitecpp-dev.
inline constexpr const char* kFromSourceImage = "debian:bookworm-slim";
// The source archive's name in the bucket folder (so /results/attnsweep-src.tar.gz in a job).
inline constexpr const char* kSourceArchiveName = "attnsweep-src.tar.gz";
// The script, inside the archive, that a --from-source job runs.
inline constexpr const char* kFromSourceScript = "container/job-from-source.sh";

struct JobSettings {
  BucketFolder results;       // the folder the jobs mount: ORG/NAME/PREFIX
  std::string sweep_id;
  std::string flavor;
  std::string timeout;        // as given, in hf's spelling ("2h")
  std::string image;          // --image (built from container/Dockerfile, attnsweep on its PATH), or kFromSourceImage
  std::string job_namespace;  // --namespace, or "" for the token's user
  bool pass_token = false;    // -s HF_TOKEN: hf sends the local token as a secret
  bool from_source = false;   // image is kFromSourceImage; the job builds attnsweep (bash -c from_source_bootstrap())
                              // and gets ATTNSWEEP_IMAGE=kFromSourceImage (runs.container_image)
  std::string git_sha;        // with from_source: the archived commit, as ATTNSWEEP_GIT_SHA (runs.git_sha)
  std::string schedule;       // --schedule: @daily ... or a cron string; the job runs `attnsweep nightly`
};

// --schedule: @hourly, @daily, @weekly, @monthly, @yearly (or @annually), or five cron fields
// (minute hour day-of-month month day-of-week) of digits, '*', ',', '-', '/'
// and names (MON, JAN), each value within its field's range ('99 99 99 99 99' is
// refused naming the minute). Throws BadInputError naming what is allowed.
void check_schedule(const std::string& schedule);

// "shard-1-of-4.db": the name a shard's database has in the job and the bucket.
std::string shard_database_name(const ShardSpec& shard);
// shard-K-of-N.db back to K/N; none for any other name.
std::optional<ShardSpec> shard_of_database_name(const std::string& file_name);

std::vector<std::string> upload_config_command(const std::string& config_path, const BucketFolder& results);
// --from-source: the archive of the checkout's HEAD (git archive writes the
// committed tree, at the top of the archive) to stdout, which the launch points
// at a file it made privately, and the upload of that file.
std::vector<std::string> source_archive_command(const std::string& source_dir);
std::vector<std::string> upload_source_command(const std::string& archive_path, const BucketFolder& results);
// What bash -c runs in a --from-source job: takes only the script out of the
// archive in the mounted bucket and execs it with the job's remaining
// arguments (the run arguments, as separate words: nothing of theirs is quoted).
// The script unpacks the whole archive, installs, builds and runs.
std::string from_source_bootstrap();
// What the job runs (HF Jobs runs it directly: no shell, the image's entrypoint
// unused); with `--gpus all` on a flavor of several GPUs (flavor_gpu_count).
std::vector<std::string> shard_run_command(const JobSettings& settings, const ShardSpec& shard);
std::vector<std::string> run_job_command(const JobSettings& settings, const ShardSpec& shard);
// --schedule: what a scheduled job runs, `attnsweep nightly /results/config.yaml
// --history /results --db ... --summary ...`, and the `hf jobs scheduled run`
// that creates the schedule.
std::vector<std::string> nightly_job_command();
std::vector<std::string> scheduled_run_command(const JobSettings& settings);
// The schedule's id in what `hf jobs scheduled run` printed (as job_id_in).
std::optional<std::string> schedule_id_in(const std::string& output);
std::vector<std::string> hardware_command();
std::vector<std::string> wait_command(const std::vector<std::string>& job_ids, const std::string& job_namespace);
std::vector<std::string> inspect_command(const std::vector<std::string>& job_ids, const std::string& job_namespace);
// Every file of the folder, or only the shard databases (no traces) when `databases_only`.
std::vector<std::string> sync_command(const BucketFolder& folder, const std::string& directory, bool databases_only);

// A command as a POSIX shell line, each word quoted where needed.
std::string command_line(const std::vector<std::string>& command);

// The job id in what `hf jobs run -d` printed: "  id: ID" (human), "id=ID ..."
// (agent) or a bare id on its own line (quiet); none when there is none.
std::optional<std::string> job_id_in(const std::string& output);

struct JobStage {
  std::string stage;    // COMPLETED, CANCELED, ERROR, DELETED, SCHEDULING, RUNNING
  std::string message;  // why, when the service gave a reason
};
// Stages by job id from `hf jobs wait --format json` ([{"id", "stage",
// "message"}]) or `hf jobs inspect --format json` ([{"id", "status": {"stage",
// "message"}}]); for other output, a known stage word on a line naming the id.
std::map<std::string, JobStage> job_stages_in(const std::string& output, const std::vector<std::string>& job_ids);

}  // namespace attnsweep::jobs
