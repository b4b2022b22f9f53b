#include "runner/jobs/launch.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <memory>
#include <random>
#include <regex>

#include "runner/common/errors.hpp"
#include "runner/common/temp_folder.hpp"
#include "runner/common/text.hpp"
#include "runner/config/config.hpp"
#include "runner/jobs/duration.hpp"
#include "runner/jobs/flavors.hpp"
#include "runner/jobs/process.hpp"
#include "runner/report/escaping.hpp"

namespace attnsweep::jobs {
namespace {

constexpr std::size_t kMaxSweepIdLength = 64;
// git's limits: a question about the checkout; its archive (a large checkout on a slow disk).
constexpr double kGitQuerySeconds = 60;
constexpr double kGitArchiveSeconds = 600;

// Runs git, telling a timeout apart from "not a checkout".
ProcessResult run_git(const std::string& git, const std::vector<std::string>& arguments) {
  ProcessResult result = run_process(git, arguments, -1, kGitQuerySeconds);
  if (result.timed_out) {
    throw std::runtime_error("--from-source: git " + arguments[2] + " in '" + arguments[1] + "': " +
                             failure_reason(result, "git"));
  }
  return result;
}

bool is_id_character(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

// The config's name made label-safe and short: "nightly".
std::string schedule_name(const Config& config) {
  std::string name = config.name.empty() ? std::filesystem::path(config.source_path).stem().string() : config.name;
  for (char& c : name) c = is_id_character(c) ? c : '-';
  while (!name.empty() && !std::isalnum(static_cast<unsigned char>(name.front()))) name.erase(0, 1);
  if (name.size() > 40) name.resize(40);
  return name.empty() ? "sweep" : name;
}

// "<config name>-20261120T101500-a1b2".
std::string default_sweep_id(const Config& config) {
  const std::string name = schedule_name(config);
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%S", &utc);
  std::random_device random;
  char hex[8];
  std::snprintf(hex, sizeof hex, "%04x", static_cast<unsigned>(random() & 0xffffu));
  return name + "-" + stamp + "-" + hex;
}

std::string minutes(std::int64_t nanoseconds) { return describe_duration(nanoseconds); }

std::string trimmed(const std::string& text) {
  const auto end = text.find_last_not_of(" \t\r\n");
  return end == std::string::npos ? "" : text.substr(0, end + 1);
}

// --from-source: the checkout whose HEAD the jobs build.
struct SourceCheckout {
  std::string top;  // the checkout's top folder: git archive run in a subfolder would archive only that
  std::string sha;  // HEAD, 12 hex digits
  bool changed = false;  // tracked files differ from HEAD (the archive leaves that out)
};

SourceCheckout inspect_checkout(const std::string& source_dir) {
  const auto git = find_on_path("git");
  if (!git) throw BadInputError("--from-source: git not found on PATH (the source archive is made with git archive)");
  const std::string directory = source_dir.empty() ? std::filesystem::current_path().string() : source_dir;
  const ProcessResult top = run_git(*git, {"-C", directory, "rev-parse", "--show-toplevel"});
  if (!top.succeeded() || trimmed(top.output).empty()) {
    throw BadInputError("--source: '" + directory + "' is not a git checkout; --from-source archives the HEAD of "
                        "attnsweep's checkout (run in it, or give --source DIR)");
  }
  SourceCheckout checkout;
  checkout.top = trimmed(top.output);
  const ProcessResult head = run_git(*git, {"-C", checkout.top, "rev-parse", "--short=12", "--verify", "HEAD"});
  if (!head.succeeded() || trimmed(head.output).empty()) {
    throw BadInputError("--source: '" + checkout.top + "' has no commit to archive");
  }
  checkout.sha = trimmed(head.output);
  const std::string script = std::string("HEAD:") + kFromSourceScript;
  if (!run_git(*git, {"-C", checkout.top, "cat-file", "-e", script}).succeeded()) {
    throw BadInputError("--source: HEAD of '" + checkout.top + "' has no " + kFromSourceScript +
                        ": not attnsweep's checkout, or a commit from before --from-source");
  }
  const ProcessResult status = run_git(*git, {"-C", checkout.top, "status", "--porcelain", "--untracked-files=no"});
  checkout.changed = status.succeeded() && !trimmed(status.output).empty();
  return checkout;
}

// The local source archive: a new file of `pattern` (mkostemps: a random name,
// O_EXCL so nothing already there, file or link, is opened, mode 0600), closed
// and removed when it goes out of scope, uploaded or not. TMPDIR may be shared
// (/tmp): a predictable name there could be planted by another user.
class PrivateFile {
 public:
  explicit PrivateFile(const std::string& pattern) : path_(pattern) {
    constexpr int kSuffixLength = 7;  // ".tar.gz"
    fd_ = ::mkostemps(path_.data(), kSuffixLength, O_CLOEXEC | O_NOFOLLOW);
    if (fd_ < 0) {
      throw LaunchStopped("cannot make the source archive's temporary file " + pattern + ": " +
                              std::strerror(errno) + " (TMPDIR names where it goes); no job was started",
                          {});
    }
  }
  ~PrivateFile() {
    ::close(fd_);
    ::unlink(path_.c_str());
  }
  PrivateFile(const PrivateFile&) = delete;
  PrivateFile& operator=(const PrivateFile&) = delete;
  int fd() const { return fd_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
};

// An image as HF Jobs takes it, a Docker Hub image or a Space's ("hf.co/spaces/ORG/NAME"):
// a reference of docker's grammar, [REGISTRY[:PORT]/]PATH[:TAG][@sha256:DIGEST], each
// path part of lowercase letters and digits with '.', '_', '__' or dashes between them.
// So no blank, quote or control character, and no leading '-', which hf (click) would
// take for an option of its own.
void check_image(const std::string& image) {
  static const std::string part = "[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*";
  static const std::string label = "[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?";
  static const std::regex reference("(?:" + label + "(?:\\." + label + ")*(?::[0-9]+)?/)?" + part + "(?:/" + part +
                                    ")*(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@sha256:[0-9a-f]{64})?");
  if (image.empty() || (image.size() <= 255 && std::regex_match(image, reference))) return;
  throw BadInputError("--image: '" + report::terminal_safe(image) + "' is not an image name; allowed: a Docker Hub "
                      "image or a Space's, [REGISTRY/]NAME[:TAG][@sha256:DIGEST] with NAME of lowercase letters, digits "
                      "and '.', '_', '-' between them, parts separated by '/' (e.g. docker.io/ORG/attnsweep:TAG, "
                      "hf.co/spaces/ORG/NAME)");
}

void check_namespace(const std::string& job_namespace) {
  bool valid = job_namespace.empty() || std::isalnum(static_cast<unsigned char>(job_namespace.front()));
  for (const char c : job_namespace) valid = valid && (is_id_character(c) || c == '.');
  if (!valid) {
    throw BadInputError("--namespace: '" + report::terminal_safe(job_namespace) + "' is not a user or organization name; allowed: letters, "
                        "digits, '-', '_' and '.', starting with a letter or digit (hf would read a leading '-' as an "
                        "option)");
  }
}

// The refusal for a shard that will not fit, with what would.
std::string over_timeout(const ShardEstimate& worst, const LaunchRequest& request, const std::string& timeout,
                         std::int64_t timeout_seconds, const Plan& plan, const MeasureSettings& measure) {
  std::string message = "shard " + worst.shard.label() + " is expected to take " + minutes(worst.expected_ns) +
                        " (" + minutes(worst.model_ns) + " on one H200 by the cost model + " +
                        minutes(kJobStartAllowanceNs) + " job start" +
                        (worst.build_ns > 0 ? " + " + minutes(worst.build_ns) + " install and build" : "") +
                        "), over --timeout " + timeout + " (" +
                        minutes(timeout_seconds * 1'000'000'000) + ")";
  const std::string longer = "--timeout " + timeout_for(worst.expected_ns / 1'000'000'000 + 1);
  const auto fitting = shards_that_fit(plan, measure, request.shards, timeout_seconds * 1'000'000'000, worst.build_ns);
  if (fitting) return message + "; use --shards " + std::to_string(*fitting) + " or " + longer;
  if (timeout_seconds * 1'000'000'000 <= kJobStartAllowanceNs + worst.build_ns) return message + "; use " + longer;
  return message + "; more shards cannot fit it (a single case takes longer): use " + longer;
}

// " failed: " after a call that ran out of time (not tried again), else " failed twice: ".
std::string failed(const ProcessResult& result) { return result.timed_out ? " failed: " : " failed twice: "; }

}  // namespace

void check_sweep_id(const std::string& sweep_id) {
  bool valid = !sweep_id.empty() && sweep_id.size() <= kMaxSweepIdLength &&
               std::isalnum(static_cast<unsigned char>(sweep_id.front()));
  for (const char c : sweep_id) valid = valid && is_id_character(c);
  if (!valid) {
    throw BadInputError("--sweep-id: '" + report::terminal_safe(sweep_id) + "' is not a valid sweep id; letters, digits, '_' and '-', "
                        "1 to 64 characters, starting with a letter or digit (it becomes a job label and a "
                        "bucket folder)");
  }
}

FlavorList available_flavors(const HfCli* hf) {
  if (!hf) return {known_flavors(), "attnsweep's built-in list: hf is not on PATH"};
  const ProcessResult result = hf->run(hardware_command(), kHfListSeconds);
  if (result.succeeded()) {
    auto names = flavors_from_hardware_json(result.output);
    if (!names.empty()) return {names, "as hf jobs hardware lists them"};
  }
  const std::string why = result.succeeded() ? "printed no flavor list" : "did not answer (" + failure_reason(result) + ")";
  return {known_flavors(), "attnsweep's built-in list: hf jobs hardware " + why};
}

FlavorList built_in_flavors() {
  return {known_flavors(), "attnsweep's built-in list: a dry run asks hf nothing; a launch checks hf jobs hardware"};
}

LaunchPlan plan_launch(const LaunchRequest& request, const std::function<FlavorList()>& flavors) {
  if (!request.from_source && request.image.empty()) throw BadInputError(kImageRequired);
  const BucketFolder bucket = parse_bucket_folder(request.results, "--results");
  if (!request.sweep_id.empty()) check_sweep_id(request.sweep_id);
  const std::string timeout = request.timeout.empty() ? kDefaultJobTimeout : request.timeout;
  const std::int64_t timeout_seconds = parse_job_duration(timeout, "--timeout");
  if (!request.schedule.empty()) {
    check_schedule(request.schedule);
    if (request.shards != 1) {
      throw BadInputError("--schedule: each night is one job running attnsweep nightly on the whole config; leave "
                          "--shards out (or give 1), not " + std::to_string(request.shards));
    }
  }
  if (request.shards < 1 || request.shards > kMaxShards) {
    throw BadInputError("--shards: " + std::to_string(request.shards) + " is out of range; 1 to " +
                        std::to_string(kMaxShards));
  }
  check_image(request.image);
  check_namespace(request.job_namespace);
  if (request.from_source && !request.image.empty()) {
    throw BadInputError(std::string("--image and --from-source exclude each other: --image runs an image with attnsweep "
                                    "built in, --from-source runs the stock ") + kFromSourceImage +
                        " and builds attnsweep in each job");
  }
  if (!request.from_source && !request.source_dir.empty()) {
    throw BadInputError("--source: only with --from-source (the checkout whose HEAD the jobs build)");
  }

  const Config config = load_config(request.config_path);
  if (!config.claims_files.empty()) {
    // The jobs get the config file alone: a claims file beside it would not be found there.
    throw BadInputError(request.config_path + ": claims: launch uploads the config alone, so its claims files (" +
                        text::join(config.claims_files, ", ") +
                        ") would not be found in the jobs; launch a copy of the config without `claims` and measure "
                        "the claims with attnsweep run (docs/config.md, \"Claims\")");
  }
  const Plan plan = make_plan(config);
  if (static_cast<std::size_t>(request.shards) > plan.cases.size()) {
    throw BadInputError(request.config_path + ": " + std::to_string(request.shards) + " shards for a plan of " +
                        std::to_string(plan.cases.size()) + " cases; use at most " +
                        std::to_string(plan.cases.size()) + " shards");
  }

  LaunchPlan launch;
  launch.config_path = request.config_path;
  launch.sweep_cases = static_cast<int>(plan.cases.size());
  launch.timeout_seconds = timeout_seconds;
  launch.estimates = estimate_shards(plan, config.measure, request.shards,
                                     request.from_source ? kFromSourceBuildAllowanceNs : 0);
  const ShardEstimate* worst = &launch.estimates.front();
  for (const auto& estimate : launch.estimates) {
    if (estimate.expected_ns > worst->expected_ns) worst = &estimate;
  }
  if (worst->expected_ns > timeout_seconds * 1'000'000'000) {
    throw BadInputError(over_timeout(*worst, request, timeout, timeout_seconds, plan, config.measure));
  }
  // Once the input checked so far is good: a launch asks hf for the list (a network call).
  const FlavorList known = flavors();
  check_flavor(request.flavor, known.names, known.source);

  JobSettings& settings = launch.settings;
  // A schedule keeps its name night after night: the config's, without a time.
  settings.sweep_id = !request.sweep_id.empty() ? request.sweep_id
                      : request.schedule.empty() ? default_sweep_id(config)
                                                 : schedule_name(config);
  settings.schedule = request.schedule;
  settings.results = bucket.prefix.empty() ? bucket.with_prefix(settings.sweep_id) : bucket;
  settings.flavor = request.flavor;
  settings.timeout = timeout;
  settings.image = request.from_source ? kFromSourceImage : request.image;
  settings.job_namespace = request.job_namespace;
  settings.pass_token = request.pass_token;
  launch.upload = upload_config_command(request.config_path, settings.results);
  if (request.from_source) {
    const SourceCheckout checkout = inspect_checkout(request.source_dir);
    settings.from_source = true;
    settings.git_sha = checkout.sha;
    launch.source_dir = checkout.top;
    // Absolute: a relative TMPDIR starting with '-' would reach hf as an option.
    launch.archive_path = (std::filesystem::absolute(temp_folder()) /
                           ("attnsweep-src-" + settings.sweep_id + "-XXXXXX.tar.gz"))
                              .string();
    launch.archive = source_archive_command(checkout.top);
    launch.upload_source = upload_source_command(launch.archive_path, settings.results);
    if (checkout.changed) {
      launch.warnings.push_back("--source: '" + checkout.top + "' has uncommitted changes; the jobs build its HEAD (" +
                                checkout.sha + ") without them (commit them first to include them)");
    }
  }
  if (!settings.schedule.empty()) {
    launch.jobs.push_back(scheduled_run_command(settings));
    if (const int gpus = flavor_gpu_count(settings.flavor); gpus > 1) {
      launch.warnings.push_back("--flavor " + settings.flavor + ": attnsweep nightly measures on one of its " +
                                std::to_string(gpus) + " GPUs; the others stay idle (and are billed)");
    }
    return launch;
  }
  for (const auto& estimate : launch.estimates) launch.jobs.push_back(run_job_command(settings, estimate.shard));
  return launch;
}

std::vector<StartedJob> start_jobs(const HfCli& hf, const LaunchPlan& plan, const LaunchEvents& events) {
  const auto retrying = [&](const std::string& what) {
    return [&events, what](const std::string& reason, double pause) {
      if (events.retrying) events.retrying(what, reason, pause);
    };
  };
  std::unique_ptr<PrivateFile> archive;
  if (!plan.archive.empty()) {
    const auto git = find_on_path("git");
    if (!git) throw LaunchStopped("git not found on PATH (the source archive is made with git archive); no job was started", {});
    archive = std::make_unique<PrivateFile>(plan.archive_path);
    const ProcessResult made =
        run_process(*git, {plan.archive.begin() + 1, plan.archive.end()}, archive->fd(), kGitArchiveSeconds);
    if (!made.succeeded()) {
      throw LaunchStopped("making the source archive failed (" + command_line(plan.archive) + " > " +
                              archive->path() + "): " + failure_reason(made, "git") + "; no job was started",
                          {});
    }
  }
  const ProcessResult upload = hf.run_with_retry(plan.upload, kHfUploadSeconds, retrying("uploading the config"));
  if (!upload.succeeded()) {
    throw LaunchStopped("uploading the config to " + plan.settings.results.file(kConfigFileName) + failed(upload) +
                            failure_reason(upload) + "; no job was started",
                        {});
  }
  if (events.config_uploaded) events.config_uploaded();
  if (!plan.upload_source.empty()) {
    const ProcessResult uploaded = hf.run_with_retry(upload_source_command(archive->path(), plan.settings.results),
                                                     kHfUploadSeconds, retrying("uploading the source archive"));
    if (!uploaded.succeeded()) {
      throw LaunchStopped("uploading the source archive to " + plan.settings.results.file(kSourceArchiveName) +
                              failed(uploaded) + failure_reason(uploaded) + "; no job was started",
                          {});
    }
    if (events.source_uploaded) events.source_uploaded();
  }

  std::vector<StartedJob> started;
  for (std::size_t i = 0; i < plan.jobs.size(); ++i) {
    const ShardSpec shard = plan.estimates[i].shard;
    const std::string what = plan.settings.schedule.empty() ? "shard " + shard.label() : "the schedule";
    const ProcessResult result = hf.run_with_retry(plan.jobs[i], kHfSubmitSeconds, retrying(what));
    const auto job_id = !result.succeeded()               ? std::nullopt
                        : plan.settings.schedule.empty() ? job_id_in(result.output)
                                                         : schedule_id_in(result.output);
    if (!job_id) {
      const std::string submit = plan.settings.schedule.empty() ? "hf jobs run" : "hf jobs scheduled run";
      std::string why = result.succeeded() ? "hf printed no job id: " + failure_reason(result)
                                           : submit + failed(result) + failure_reason(result);
      if (result.timed_out) {
        // The service may have taken it before hf was stopped.
        why += plan.settings.schedule.empty()
                   ? " (the job may have started all the same: hf jobs ps -a --label " + std::string(kSweepLabel) +
                         "=" + plan.settings.sweep_id + ")"
                   : " (the schedule may exist all the same: hf jobs scheduled ls)";
      }
      std::vector<std::string> running, not_started;
      for (const auto& job : started) running.push_back(job.shard.label() + " (job " + job.job_id + ")");
      for (std::size_t j = i; j < plan.jobs.size(); ++j) not_started.push_back(plan.estimates[j].shard.label());
      std::string message = what + ": " + why + "; ";
      message += started.empty() ? "no job was started"
                                 : "started: " + text::join(running, ", ") + " (still running)";
      message += "; not started: " + text::join(not_started, ", ");
      throw LaunchStopped(message, started);
    }
    started.push_back({shard, *job_id});
    if (events.job_started) events.job_started(started.back());
  }
  return started;
}

std::vector<JobOutcome> wait_for_jobs(const HfCli& hf, const std::vector<StartedJob>& started,
                                      const std::string& job_namespace, double time_limit_seconds) {
  std::vector<std::string> ids;
  for (const auto& job : started) ids.push_back(job.job_id);
  // wait exits non-zero when a job did not complete; its table names every stage all the same.
  const ProcessResult waited = hf.run(wait_command(ids, job_namespace), time_limit_seconds);
  auto stages = job_stages_in(waited.output, ids);
  std::vector<std::string> unknown;
  for (const auto& id : ids) {
    if (!stages.count(id)) unknown.push_back(id);
  }
  if (!unknown.empty()) {
    const ProcessResult inspected = hf.run(inspect_command(unknown, job_namespace), kHfInspectSeconds);
    for (const auto& [id, stage] : job_stages_in(inspected.output, unknown)) stages[id] = stage;
  }
  std::vector<JobOutcome> outcomes;
  for (const auto& job : started) {
    const auto found = stages.find(job.job_id);
    outcomes.push_back({job, found == stages.end() ? JobStage{} : found->second});
  }
  return outcomes;
}

}  // namespace attnsweep::jobs
