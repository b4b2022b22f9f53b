// `attnsweep launch hf CONFIG --flavor F --shards N --results hf://buckets/...`:
// one Hugging Face Job per shard (runner/jobs/launch.hpp). --dry-run prints the
// exact hf commands, shell-quoted, and each shard's estimate as comments;
// --wait follows the jobs and reports each one's final stage. A dry run makes no
// network call (the built-in flavor list); every hf call has a time limit
// (runner/jobs/hf_cli.hpp, ATTNSWEEP_HF_TIMEOUT_SECONDS).
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include "runner/cli/commands.hpp"
#include "runner/cli/guarded.hpp"
#include "runner/common/text.hpp"
#include "runner/jobs/duration.hpp"
#include "runner/jobs/launch.hpp"

namespace attnsweep::cli {
namespace {

jobs::LaunchRequest request_of(const LaunchOptions& options) {
  jobs::LaunchRequest request;
  request.config_path = options.config_path;
  request.flavor = options.flavor;
  request.shards = options.shards.value_or(0);
  request.results = options.results;
  request.image = options.image;
  request.timeout = options.timeout;
  request.job_namespace = options.job_namespace;
  request.sweep_id = options.sweep_id;
  request.pass_token = options.token;
  request.from_source = options.from_source;
  request.source_dir = options.source_dir;
  request.schedule = options.schedule;
  if (!options.shards) {
    if (options.schedule.empty()) throw BadInputError("--shards N is required: one job per shard of the sweep");
    request.shards = 1;  // a schedule runs one job a night
  }
  return request;
}

// "sweep big-1: 4 shards of 96 cases on h200, --timeout 2h; results in hf://buckets/org/b/big-1"
std::string headline(const jobs::LaunchPlan& plan) {
  const jobs::JobSettings& settings = plan.settings;
  return "sweep " + settings.sweep_id + ": " + std::to_string(plan.jobs.size()) + " shards of " +
         std::to_string(plan.sweep_cases) + " cases on " + settings.flavor + ", --timeout " + settings.timeout +
         "; results in " + settings.results.uri();
}

// "shard 0/4: 24 cases, expected 41.2 min (38.2 min on one H200 by the cost model + 3.0 min job start)"
std::string estimate_line(const jobs::ShardEstimate& estimate) {
  return "shard " + estimate.shard.label() + ": " + std::to_string(estimate.cases) + " cases, expected " +
         jobs::describe_duration(estimate.expected_ns) + " (" + jobs::describe_duration(estimate.model_ns) +
         " on one H200 by the cost model + " + jobs::describe_duration(jobs::kJobStartAllowanceNs) + " job start" +
         (estimate.build_ns > 0 ? " + " + jobs::describe_duration(estimate.build_ns) + " install and build" : "") + ")";
}

std::string namespace_option(const jobs::LaunchPlan& plan) {
  return plan.settings.job_namespace.empty() ? "" : " --namespace " + plan.settings.job_namespace;
}

std::string collect_hint(const jobs::LaunchPlan& plan) {
  return "attnsweep collect " + plan.settings.results.uri() + " " + plan.settings.sweep_id + ".db";
}

void warn(const jobs::LaunchPlan& plan) {
  for (const auto& warning : plan.warnings) std::cerr << "warning: " << warning << std::endl;
}

// "schedule nightly: attnsweep nightly @daily on h200, --timeout 30m; nights in hf://buckets/org/b/nightly"
std::string schedule_headline(const jobs::LaunchPlan& plan) {
  const jobs::JobSettings& settings = plan.settings;
  return "schedule " + settings.sweep_id + ": attnsweep nightly of " + std::to_string(plan.sweep_cases) +
         " cases, " + text::shell_quote(settings.schedule) + ", on " + settings.flavor + ", --timeout " + settings.timeout +
         "; nights (nightly-<stamp>.db and .md) in " + settings.results.uri();
}

int dry_run(const jobs::LaunchPlan& plan) {
  warn(plan);
  std::cout << "# " << (plan.settings.schedule.empty() ? headline(plan) : schedule_headline(plan)) << "\n";
  for (const auto& estimate : plan.estimates) {
    std::string line = estimate_line(estimate);
    if (!plan.settings.schedule.empty()) line.replace(0, line.find(':'), "each night");  // one job, the whole plan
    std::cout << "# " << line << "\n";
  }
  // The archive's file gets its random name (the XXXXXX) when a launch makes it.
  if (!plan.archive.empty()) std::cout << jobs::command_line(plan.archive) << " > " << text::shell_quote(plan.archive_path) << "\n";
  std::cout << jobs::command_line(plan.upload) << "\n";
  if (!plan.upload_source.empty()) std::cout << jobs::command_line(plan.upload_source) << "\n";
  for (const auto& job : plan.jobs) std::cout << jobs::command_line(job) << "\n";
  std::cout.flush();
  return static_cast<int>(kExitOk);
}

int report_outcomes(const jobs::LaunchPlan& plan, const std::vector<jobs::JobOutcome>& outcomes) {
  std::vector<std::string> unfinished;
  for (const auto& outcome : outcomes) {
    const std::string& stage = outcome.stage.stage;
    std::cout << "shard " << outcome.job.shard.label() << ": job " << outcome.job.job_id << " "
              << (stage.empty() ? "stage unknown (hf jobs inspect " + outcome.job.job_id + ")" : stage)
              << (outcome.stage.message.empty() ? "" : ": " + outcome.stage.message) << "\n";
    if (stage != "COMPLETED") {
      unfinished.push_back(outcome.job.shard.label() + " (job " + outcome.job.job_id + ", " +
                           (stage.empty() ? "unknown" : stage) + ")");
    }
  }
  if (unfinished.empty()) {
    std::cout << "all " << outcomes.size() << " jobs completed; collect: " << collect_hint(plan) << std::endl;
    return static_cast<int>(kExitOk);
  }
  std::cout.flush();
  std::cerr << "error: " << unfinished.size() << " of " << outcomes.size() << " jobs did not complete: ";
  for (std::size_t i = 0; i < unfinished.size(); ++i) std::cerr << (i ? ", " : "") << "shard " << unfinished[i];
  std::cerr << "; collect what was published: " << collect_hint(plan) << std::endl;
  return static_cast<int>(kExitRuntimeFailure);
}

jobs::LaunchEvents printing_events(const jobs::LaunchPlan& plan) {
  jobs::LaunchEvents events;
  events.config_uploaded = [&plan] {
    std::cout << "config uploaded to " << plan.settings.results.file(jobs::kConfigFileName) << std::endl;
  };
  events.source_uploaded = [&plan] {
    std::cout << "source archive of " << plan.settings.git_sha << " uploaded to "
              << plan.settings.results.file(jobs::kSourceArchiveName) << "; each job builds attnsweep in "
              << plan.settings.image << std::endl;
  };
  events.retrying = [](const std::string& what, const std::string& reason, double pause) {
    std::cerr << "warning: " << what << ": hf failed (" << reason << "); trying again in "
              << text::fixed(pause, pause < 1 ? 1 : 0) << " s" << std::endl;
  };
  return events;
}

// --schedule: the config into the bucket, then `hf jobs scheduled run`; prints
// how to see, suspend, trigger and delete the schedule.
int create_schedule(const jobs::HfCli& hf, const jobs::LaunchPlan& plan) {
  warn(plan);
  std::cout << schedule_headline(plan) << std::endl;
  const std::vector<jobs::StartedJob> created = jobs::start_jobs(hf, plan, printing_events(plan));
  const std::string id = created.front().job_id;
  const std::string ns = namespace_option(plan);
  std::cout << "schedule " << id << " created: each run compares with the previous night in "
            << plan.settings.results.uri() << ", prints the summary in its log and fails on a regression\n"
            << "  see:      hf jobs scheduled inspect" << ns << " " << id << "   (all: hf jobs scheduled ls" << ns
            << ")\n"
            << "  nights:   hf jobs ps -a" << ns << " --label " << jobs::kNightlyLabel << "=" << plan.settings.sweep_id
            << "   (a night's log: hf jobs logs" << ns << " JOB_ID)\n"
            << "  run now:  hf jobs scheduled trigger" << ns << " " << id << "\n"
            << "  pause:    hf jobs scheduled suspend" << ns << " " << id << "   (again: hf jobs scheduled resume" << ns
            << " " << id << ")\n"
            << "  remove:   hf jobs scheduled delete" << ns << " " << id << "\n"
            << "  results:  hf buckets sync " << plan.settings.results.uri() << " nights/ --include 'nightly-*'"
            << std::endl;
  return static_cast<int>(kExitOk);
}

}  // namespace

int launch_command(const LaunchOptions& options) {
  return guarded("error: ", [&] {
    if (options.backend != "hf") {
      throw BadInputError("launch: unknown backend '" + options.backend + "'; known: hf (Hugging Face Jobs)");
    }
    const auto hf = jobs::HfCli::find_if_present();
    // A dry run makes no network call: the built-in flavors, not hf jobs hardware.
    const jobs::LaunchPlan plan = jobs::plan_launch(request_of(options), [&] {
      return options.dry_run ? jobs::built_in_flavors() : jobs::available_flavors(hf ? &*hf : nullptr);
    });
    if (!options.schedule.empty() && options.wait) {
      throw BadInputError("--wait and --schedule exclude each other: a schedule starts its jobs later; follow a "
                          "night with hf jobs ps --label " + std::string(jobs::kNightlyLabel) + "=NAME");
    }
    if (options.dry_run) return dry_run(plan);
    if (!hf) throw std::runtime_error(jobs::kHfMissing);
    if (!plan.settings.schedule.empty()) return create_schedule(*hf, plan);

    warn(plan);
    std::cout << headline(plan) << std::endl;
    jobs::LaunchEvents events = printing_events(plan);
    events.job_started = [&](const jobs::StartedJob& job) {
      std::cout << "shard " << job.shard.label() << ": job " << job.job_id << " started (expected "
                << jobs::describe_duration(plan.estimates[static_cast<std::size_t>(job.shard.index)].expected_ns)
                << ")" << std::endl;
    };
    const std::vector<jobs::StartedJob> started = jobs::start_jobs(*hf, plan, events);
    std::cout << started.size() << " jobs started; watch: hf jobs ps" << namespace_option(plan) << " --label "
              << jobs::kSweepLabel << "=" << plan.settings.sweep_id << " (logs: hf jobs logs" << namespace_option(plan)
              << " JOB_ID)" << std::endl;
    if (!options.wait) {
      std::cout << "when they end: " << collect_hint(plan) << std::endl;
      return static_cast<int>(kExitOk);
    }
    // hf jobs wait gets the jobs' timeout and a margin (their start, a wait for a GPU).
    const double wait_limit = static_cast<double>(plan.timeout_seconds) + jobs::kHfWaitMarginSeconds;
    const auto nanoseconds = [](double seconds) { return static_cast<std::int64_t>(seconds * 1e9); };
    const auto override_seconds = jobs::hf_timeout_override();
    std::cout << "waiting for the jobs to end (hf jobs wait, stopped after "
              << (override_seconds ? jobs::describe_duration(nanoseconds(*override_seconds)) + ": " +
                                         jobs::kHfTimeoutVariable
                                   : jobs::describe_duration(nanoseconds(wait_limit)) + ": --timeout " +
                                         plan.settings.timeout + " + " +
                                         jobs::describe_duration(nanoseconds(jobs::kHfWaitMarginSeconds)))
              << ")" << std::endl;
    return report_outcomes(plan, jobs::wait_for_jobs(*hf, started, plan.settings.job_namespace, wait_limit));
  });
}

}  // namespace attnsweep::cli
