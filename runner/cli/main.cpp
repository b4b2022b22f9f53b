// attnsweep: declares the command line and hands off to runner/cli/<subcommand>_command.cpp.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <iostream>
#include <regex>
#include <sstream>

#include "runner/cli/commands.hpp"
#include "runner/common/errors.hpp"
#include "runner/common/log.hpp"
#include "runner/report/format.hpp"
#include "runner/common/text.hpp"
#include "runner/jobs/hf_cli.hpp"
#include "runner/storage/example_queries.hpp"
#include "git_sha.hpp"
#include "version.hpp"

namespace {

// A command-line mistake as one line like every other error, with the help that
// applies: "run: unknown option --bogus; see attnsweep run --help". CLI11's own
// text is two lines ("... Run with --help for more information.").
std::string usage_error(const CLI::App& app, const CLI::ParseError& error, int argc, char** argv) {
  std::string message = error.what();
  for (auto& c : message) c = c == '\n' ? ' ' : c;
  const std::vector<CLI::App*> given = app.get_subcommands();
  const CLI::App* command = given.empty() ? nullptr : given.back();
  std::smatch match;
  if (!command && dynamic_cast<const CLI::RequiredError*>(&error)) {
    // CLI11 says "A subcommand is required" for a misspelt command too: name the word.
    message = "no command given";
    for (int i = 1; i < argc; ++i) {
      const std::string word = argv[i];
      if (word == "--log-level") {
        ++i;
      } else if (word.rfind('-', 0) != 0) {
        message = "unknown command '" + word + "'";
        break;
      }
    }
    std::vector<std::string> commands;
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App* sub) { return !sub->get_group().empty(); })) {
      commands.push_back(sub->get_name());
    }
    message += "; commands: " + attnsweep::text::join(commands, ", ");
  } else if (dynamic_cast<const CLI::ExtrasError*>(&error) && std::regex_match(message, match, std::regex("[^:]*: (.*)"))) {
    // "The following arguments were not expected: x --bogus", in CLI11's order: put them in the command line's.
    std::vector<std::string> words;
    std::istringstream split{std::string(match[1])};
    for (std::string word; split >> word;) words.push_back(word);
    auto position = [&](const std::string& word) { return std::find(argv + 1, argv + argc, word) - argv; };
    std::stable_sort(words.begin(), words.end(), [&](const auto& a, const auto& b) { return position(a) < position(b); });
    const std::string extras = attnsweep::text::join(words, " ");
    const bool several = extras.find(' ') != std::string::npos;
    const bool option = !several && extras.rfind('-', 0) == 0;
    message = std::string(option ? "unknown option " : several ? "unexpected arguments " : "unexpected argument ") + extras;
    if (command && error.get_name() != command->get_name()) command = nullptr;  // given before the command
  } else if (std::regex_match(message, match, std::regex("(\\S+) is required"))) {
    message = "missing the " + std::string(match[1]) + " argument";
  } else if (std::regex_match(message, match, std::regex("(--[\\w-]+): (.*) not in \\{(.*)\\}"))) {
    std::string allowed = match[3];
    for (std::size_t at = 0; (at = allowed.find(',', at)) != std::string::npos; at += 2) allowed.replace(at, 1, ", ");
    message = std::string(match[1]) + ": unknown value '" + std::string(match[2]) + "'; allowed: " + allowed;
  } else if (std::regex_match(message, match, std::regex("(--[\\w-]+): \\d+ required \\S+ missing"))) {
    message = std::string(match[1]) + ": needs a value";
  } else if (std::regex_match(message, match, std::regex("Could not convert: (\\S+) = (.*)"))) {
    message = std::string(match[1]) + ": invalid value '" + std::string(match[2]) + "'";
  }
  // A top-level option (--log-level) is the top level's mistake, whichever command follows.
  const std::string option = message.substr(0, message.find(':'));
  if (command && option.rfind("--", 0) == 0 && app.get_option_no_throw(option) && !command->get_option_no_throw(option)) {
    command = nullptr;
  }
  if (!command) return message + "; see attnsweep --help";
  return command->get_name() + ": " + message + "; see attnsweep " + command->get_name() + " --help";
}

// --threshold and --min-change-us, the two floors under which a moved median is SAME: compare,
// nightly and history judge times by compare's rule, so all three take them alike.
void add_same_time_options(CLI::App& command, std::string& threshold, const std::string& threshold_help,
                           std::string& min_change_us, const std::string& min_change_us_help) {
  command.add_option("--threshold", threshold, threshold_help)->capture_default_str();
  command.add_option("--min-change-us", min_change_us, min_change_us_help)->capture_default_str();
}

}  // namespace

int main(int argc, char** argv) {
  using namespace attnsweep;
  CLI::App app{"attnsweep: profile attention variants over a sweep of shapes and dtypes on CPU or CUDA,\n"
               "and store kernel counts, timings and numerics in SQLite.\n\n"
               "Exit codes: 0 done (some cases may be unsupported), 1 runtime failure,\n"
               "2 bad input (command line, config or database), 3 merged but shards or\n"
               "cases still missing (merge), 4 inconclusive (compare, nightly: no regression,\n"
               "but cases whose time could not be judged), 130/143 interrupted by SIGINT/SIGTERM\n"
               "(129, 138, 140, 142: SIGHUP, SIGUSR1, SIGUSR2, SIGALRM; finished cases stay\n"
               "stored; continue with run --resume).\n"
               "Docs: docs/cli.md"};
  app.set_version_flag("--version", std::string("attnsweep ") + kVersion + " (" + kGitSha + ")");
  app.require_subcommand(1);
  // The log level: --log-level, or -q (warn) or -v (debug), which every command
  // also takes after its name (attnsweep run CONFIG -q). Two different ones are refused.
  std::string log_level = "info";
  std::string level_option;  // the option that set log_level
  const auto choose_level = [&](const std::string& option, const std::string& level) {
    if (!level_option.empty() && level_option != option) {
      throw CLI::ValidationError(option, "cannot be combined with " + level_option + " (both set the log level)");
    }
    level_option = option;
    log_level = level;
  };
  app.add_option_function<std::string>("--log-level", [&](const std::string& level) { choose_level("--log-level", level); },
                                        "trace, debug, info, warn, error or off (logs go to stderr; default info)")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));
  const auto add_verbosity_flags = [&choose_level](CLI::App& command) {
    command.add_flag_callback("-q,--quiet", [&choose_level] { choose_level("--quiet", "warn"); },
                              "only warnings and errors on stderr: no progress, no per-case lines (--log-level warn)");
    command.add_flag_callback("-v,--verbose", [&choose_level] { choose_level("--verbose", "debug"); },
                              "debug messages too (--log-level debug)");
  };
  add_verbosity_flags(app);
  // The commands are declared below: each gets -q and -v when parsing starts.
  app.preparse_callback([&app, add_verbosity_flags](std::size_t) {
    for (CLI::App* command : app.get_subcommands([](CLI::App*) { return true; })) add_verbosity_flags(*command);
  });

  cli::RunOptions run;
  auto* run_command = app.add_subcommand("run", "Run every case of a sweep config and store the results");
  run_command->add_option("config", run.config_path, "sweep config (YAML), e.g. configs/quickstart.yaml")->required();
  run_command->add_option("--db", run.db_path, "SQLite results database, created when absent")
      ->capture_default_str();
  run_command->add_option("--device", run.device, "auto, cpu, cuda or cuda:N (default: the config's, else auto)");
  run_command->add_option("--traces", run.traces_dir, "write one Chrome trace (Perfetto) per case into DIR");
  run_command
      ->add_option("--resume", run.resume_run,
                   "continue an interrupted run (its id, or 'latest'): stored cases are kept and skipped; "
                   "refused if the config or device changed")
      ->expected(0, 1)
      ->default_str("latest");
  run_command->add_flag("--isolate", run.isolate,
                        "run each case in its own worker process: a crash or a poisoned CUDA context costs one "
                        "case (status crashed), a hang is killed after measure.case_timeout_s (status timeout)");

  run_command->add_option("--shard", run.shard,
                           "run part K of N (0-based, e.g. 0/4) of the sweep: a deterministic split balanced by "
                           "expected time; its own run row, merged later with attnsweep merge. Without it, K and N "
                           "come from JOB_COMPLETION_INDEX (+ --shards or ATTNSWEEP_SHARDS) or SLURM_ARRAY_TASK_ID "
                           "and SLURM_ARRAY_TASK_COUNT when set");
  run_command->add_option("--shards", run.shards, "N for a Kubernetes indexed job (JOB_COMPLETION_INDEX gives K)");
  run_command->add_option("--sweep-id", run.sweep_id,
                          "an id shared by the shards of one launch, so merge never mixes two launches of one "
                          "config (default: ATTNSWEEP_SWEEP_ID, else slurm-SLURM_ARRAY_JOB_ID)");
  run_command->add_option("--gpus", run.gpus,
                          "all, or GPU indexes like 0,1: one worker process per GPU, cases handed out from one "
                          "queue (longest expected first), one run in one database; each case records its GPU");
  run_command->add_option("--publish", run.publish_dir,
                          "when the run ends (done, interrupted or failed), copy the database as one consistent "
                          "file, and the run's traces under traces/, into DIR (e.g. a mounted bucket, where "
                          "SQLite itself must not run)");
  run_command->add_option("--progress-interval", run.progress_interval_seconds,
                          "SECONDS between two progress lines ('progress: [i/N pct%] ok, unsupported and failed "
                          "counts | elapsed, ETA | now: case') when stderr is not a terminal (a job log) or TERM is "
                          "dumb; 0: only the last one. On a terminal the progress is a live line at the bottom "
                          "instead. -q turns both off")
      ->check(CLI::Validator(
          [](std::string& value) {
            double seconds = -1;
            const bool valid = CLI::detail::lexical_cast(value, seconds) && seconds >= 0 && seconds <= 1e9;  // not inf or nan
            return valid ? std::string() : "invalid value '" + value + "'; expected seconds, 0 or more";
          },
          ""))
      ->type_name("SECONDS")
      ->capture_default_str();

  cli::PlanOptions plan;
  auto* plan_command = app.add_subcommand("plan", "Validate a config and list the cases it would run; runs nothing");
  plan_command->add_option("config", plan.config_path, "sweep config (YAML)")->required();
  plan_command->add_option("--device", plan.device, "device to plan for: auto, cpu, cuda or cuda:N");
  plan_command->add_option("--shard", plan.shard, "list only part K of N (as run --shard K/N would run it)");
  plan_command->add_option("--shards", plan.shards, "N, with JOB_COMPLETION_INDEX giving K (as for run)");

  cli::QueryOptions query;
  auto* query_command = app.add_subcommand("query", "Run one SQL statement on a results database, opened read-only");
  query_command->add_option("db", query.db_path, "results database")->required();
  query_command->add_option("sql", query.sql, std::string("SQL, e.g. \"") + storage::kExampleQuery + "\" (docs/schema.md)")
      ->required();
  query_command
      ->add_option("--format", query.format,
                   "table (aligned columns, NULL spelled out), csv (RFC 4180), json (an array of objects, "
                   "typed values) or markdown")
      ->check(CLI::IsMember(report::format_names()))
      ->capture_default_str();

  cli::MergeOptions merge;
  auto* merge_command = app.add_subcommand(
      "merge", "Merge the shard databases of one sweep (run --shard K/N) into one run of OUT.db, with every "
               "sample, kernel and operator row; merging a shard again adds nothing. Exit 3 while shards or "
               "cases are missing: merge them when they arrive");
  merge_command->add_option("out", merge.out_path, "database to merge into, created when absent; its other runs are "
                                                   "left as they are")->required();
  merge_command->add_option("inputs", merge.inputs, "shard databases, only read (all of one sweep: the same config, "
                                                    "N and sweep id; any subset of the shards)")
      ->required();

  cli::CompareOptions compare;
  auto* compare_command = app.add_subcommand(
      "compare", "Compare two runs case by case (counts, backend, status, numerics, time) and their environments; "
                 "exit 1 on a regression");
  compare_command->add_option("baseline", compare.baseline, "BASELINE[:RUN]: database, and a run id (default: its "
                                                            "latest run)")->required();
  compare_command->add_option("candidate", compare.candidate, "CANDIDATE[:RUN]: database, and a run id (default: its "
                                                              "latest run; the same file as BASELINE with another run "
                                                              "works)")->required();
  compare_command->add_option("--format", compare.format, "text (a terminal), markdown (a job log or a pull-request "
                                                          "comment) or json (one object, docs/compare.md)")
      ->check(CLI::IsMember({"text", "markdown", "json"}))
      ->capture_default_str();
  add_same_time_options(*compare_command, compare.threshold,
                        "PCT: a median time that moved less than this is SAME (a number > 0 and < 100)",
                        compare.min_change_us,
                        "US: a median time that moved less than this many microseconds is SAME too (>= 0)");
  compare_command->footer(
      "Cases match by variant, shape, dtype, mask (causal alignment and window), pass and device kind (cpu, cuda).\n"
      "Regressions:\n"
      "  counts   kernels, memcpy or memset launches per forward changed (exact)\n"
      "  backend  another sdpa_backend ran (what sdpa_auto chose)\n"
      "  status   ok before, unsupported/oom/error/crashed/timeout now (the other way is an improvement)\n"
      "  numerics rel_error beyond the dtype's tolerance (bf16 1.6e-2, fp16 2e-3, fp32 1e-4) and within it\n"
      "           before, or more than 2x worse when it was beyond before\n"
      "  time     SLOWER. Verdicts on the kept eager samples: SAME when the median moved less than\n"
      "           --threshold or --min-change-us; else SLOWER or FASTER when a two-sided Mann-Whitney U test\n"
      "           gives p < 0.001 and the 10th percentile moved beyond --threshold the same way (the whole\n"
      "           distribution shifted); else AMBIGUOUS (also under 5 kept samples on either side). A FASTER or SLOWER case whose\n"
      "           power- or thermal-cap share differs by more than 0.2 between the runs is MARKED, not counted.\n"
      "           A case whose validity label is suspect on either side (cases.validity, docs/measurement.md) is\n"
      "           SUSPECT: no time verdict, the side and its reasons said.\n"
      "Why a case changed: with a count, backend, FASTER or SLOWER finding come its kernels that differ (added,\n"
      "removed; launches per pass, grid, block, registers, shared memory, occupancy, share of kernel time),\n"
      "names shortened (json: in full).\n"
      "Energy per pass (runs with measure.energy_window_ms) more than 10% apart on both sides is a note, never\n"
      "counted: NVML's energy counter is coarse (json: both energies of every case).\n"
      "Environment differences (driver, torch, git SHA, env_vars, ...) are listed first and never fail by\n"
      "themselves; cases in one run only are listed. Both databases are only read.\n"
      "Exit codes: 0 no regression, 1 a regression, 2 bad input (missing file, not an attnsweep database,\n"
      "no such run, bad --format, --threshold or --min-change-us). Docs: docs/compare.md");

  cli::ReportOptions report;
  auto* report_command = app.add_subcommand(
      "report", "Write one run as a self-contained HTML page with charts (opens offline), or as markdown tables");
  report_command->add_option("db", report.db_path, "results database (only read)")->required();
  report_command->add_option("--run", report.run, "the run: its id, or latest")->capture_default_str();
  report_command->add_option("--compare", report.compare_with,
                             "OTHER_DB[:RUN]: the previous run (default: OTHER_DB's latest); adds the speed-up over "
                             "it and compare's verdicts (the same file with another run works)");
  report_command->add_option("-o,--output", report.output,
                             "the file to write, or - for stdout (default: DB's name with -report.html beside it "
                             "for html, stdout for markdown)");
  report_command->add_option("--format", report.format, "html (one file: tables, charts, environment) or markdown "
                                                        "(the tables, for job logs and dataset cards)")
      ->check(CLI::IsMember({"html", "markdown"}))
      ->capture_default_str();
  report_command->add_option("--trace-url-base", report.trace_url_base,
                             "URL where the traces are served (the database's folder, e.g. a bucket's resolve URL): "
                             "each trace gets a link that opens it in ui.perfetto.dev");
  report_command->footer(
      "The HTML holds the study's table per case (kernels, memcpy, memset, GPU time, CPU dispatch, TFLOP/s, share of\n"
      "the measured ceiling, error, speed-up over naive; click a row for its kernels: names, grid, registers,\n"
      "occupancy), the environment, time against sequence length per dtype and head_dim, a roofline, kernels per\n"
      "forward, speed-ups over naive (and over --compare's run), the unsupported and failed cases with their\n"
      "reasons, and links to each case's trace, relative to the report. Chart.js is embedded: nothing is fetched.\n"
      "Exit codes: 0 written, 1 could not write (a full disk), 2 bad input (missing database, no such run,\n"
      "bad --run, --format or -o; nothing is written then). docs/report.md");

  cli::LaunchOptions launch;
  auto* launch_command = app.add_subcommand(
      "launch", "Start one job per shard of a sweep on a scheduler (hf: Hugging Face Jobs), each publishing its "
                "database into a bucket; gather them with attnsweep collect (docs/hf-jobs.md)");
  launch_command->add_option("backend", launch.backend, "where the jobs run: hf (Hugging Face Jobs)")->required();
  launch_command->add_option("config", launch.config_path, "sweep config (YAML); uploaded next to the results")
      ->required();
  launch_command->add_option("--flavor", launch.flavor,
                             "hardware of each job, e.g. h200, checked against hf jobs hardware (with --dry-run "
                             "against attnsweep's built-in list). A flavor of several GPUs (h200x2, a100x4, "
                             "l40sx8, ...) runs each shard on all of them (run --gpus all); l4x1 and l40sx1 are one GPU")
      ->required();
  launch_command->add_option("--shards", launch.shards, "N: one job per shard (required, except with --schedule: 1)");
  launch_command->add_option("--results", launch.results, "hf://buckets/ORG/NAME[/PREFIX]: the folder the jobs "
                                                          "mount (PREFIX defaults to the sweep id)")
      ->required();
  launch_command->add_option("--image", launch.image,
                             "container image with attnsweep on its PATH, required unless --from-source: no public "
                             "attnsweep image exists; build one with make image (container/Dockerfile) and push it "
                             "where HF Jobs pulls from (docker.io/ORG/attnsweep:TAG, or a Space)");
  launch_command->add_option("--timeout", launch.timeout, "each job's limit: seconds, or a number with s, m, h "
                                                          "or d (default 30m, HF Jobs' own)");
  launch_command->add_option("--namespace", launch.job_namespace, "run the jobs under this organization");
  launch_command->add_option("--sweep-id", launch.sweep_id, "the sweep id the shards share (default "
                                                            "<config name>-<UTC time>-<4 hex>)");
  launch_command->add_flag("--token", launch.token, "give each job your token as the secret HF_TOKEN "
                                                    "(-s HF_TOKEN; the value is never seen by attnsweep)");
  launch_command->add_flag("--dry-run", launch.dry_run,
                           "print the hf commands and each shard's estimate; run nothing and make no network call "
                           "(the flavor is checked against attnsweep's built-in list, not hf jobs hardware)");
  launch_command->add_flag("--wait", launch.wait, "follow the jobs to their end (hf jobs wait) and report each "
                                                  "one's stage; exit 0 only when all completed");
  launch_command->add_flag("--from-source", launch.from_source,
                           "no image of our own: each job runs plain debian:bookworm-slim, installs what the image's "
                           "build stage does (Debian packages, the torch wheel, nvcc from PyPI) and builds attnsweep "
                           "from an archive of the checkout's HEAD "
                           "(git archive, uploaded into the bucket folder); about 10 more minutes per job");
  launch_command->add_option("--source", launch.source_dir, "with --from-source: a folder of the git checkout to "
                                                            "archive (default: the current folder)");
  launch_command->add_option("--schedule", launch.schedule,
                             "@hourly, @daily, @weekly, @monthly, @yearly (or @annually) or a quoted 5-field cron "
                             "string: instead of starting jobs, create a schedule (hf jobs scheduled run) whose job runs attnsweep "
                             "nightly on the config, compares with the previous night in --results, writes the "
                             "night's database and summary there, prints the summary and fails on a regression");
  const auto seconds = [](double value) { return std::to_string(static_cast<long long>(value)) + " s"; };
  launch_command->footer(
      "Every hf call has a time limit; one that runs out is stopped (its process group: SIGTERM, then SIGKILL 3 s later)\n"
      "and reported as 'hf timed out after N s'. An upload or submission that ran out stops the launch and is not\n"
      "tried again (a job may have started: check hf jobs ps); for hf jobs hardware the built-in flavor list is used,\n"
      "for hf jobs wait each job's stage at that time is reported.\n"
      "Limits: hf jobs hardware " + seconds(jobs::kHfListSeconds) + ", hf buckets cp " + seconds(jobs::kHfUploadSeconds) +
      ", hf jobs run and scheduled run " + seconds(jobs::kHfSubmitSeconds) + ", hf jobs inspect " +
      seconds(jobs::kHfInspectSeconds) + ",\nhf jobs wait the jobs' --timeout + " + seconds(jobs::kHfWaitMarginSeconds) +
      "; " + jobs::kHfTimeoutVariable + "=N sets N seconds for every call. docs/hf-jobs.md");

  cli::CollectOptions collect;
  auto* collect_command = app.add_subcommand(
      "collect", "Fetch the shard databases a launch published into its bucket folder (hf buckets sync) and "
                 "merge them into one run of OUT.db, naming shards missing or failed. Exit 3 while incomplete");
  collect_command->add_option("source", collect.source, "hf://buckets/ORG/NAME/PREFIX, the launch's folder")
      ->required();
  collect_command->add_option("out", collect.out_path, "database to merge into, created when absent")->required();
  collect_command->add_option("--keep", collect.keep_dir, "sync the whole folder (traces too) into DIR and keep it; "
                                                          "default: only the databases, into a temporary folder");

  cli::WorkerOptions worker;
  auto* worker_command = app.add_subcommand("worker", "");  // internal: one case for --isolate (hidden)
  worker_command->group("");
  worker_command->add_flag("--probe", worker.probe, "print the device's environment as JSON and exit");
  worker_command->add_flag("--serve", worker.serve, "serve cases of the run read from stdin (--gpus)");
  worker_command->add_flag("--no-ceilings", worker.no_ceilings, "with --serve: do not measure the ceilings");
  worker_command->add_option("--config-sha256", worker.config_sha256);
  worker_command->add_option("--db", worker.db_path);
  worker_command->add_option("--run-id", worker.run_id);
  worker_command->add_option("--plan-index", worker.plan_index);
  worker_command->add_option("--device", worker.device)->required();
  worker_command->add_option("--trace", worker.trace_path);
  worker_command->add_option("--op-library-identities", worker.op_library_identities);
  worker_command->add_option("--load-op-library", worker.op_library_files, "load these op libraries and exit");

  std::string env_device;
  auto* env_command = app.add_subcommand(
      "env", "Print the environment fingerprint a run records, as JSON, without running anything");
  env_command->add_option("--device", env_device, "auto (default), cpu, cuda or cuda:N");
  env_command->footer(
      "Prints one JSON object: attnsweep version and git SHA, device name and GPU UUID, driver, CUDA runtime,\n"
      "cuDNN and torch versions, container image (ATTNSWEEP_IMAGE), hostname, the GPU's power limit, SM and\n"
      "memory clocks, temperature and NVML clock event reasons now, and env_vars: the set environment\n"
      "variables that change results (TORCH_CUDNN_*, CUDA_VISIBLE_DEVICES, NVIDIA_TF32_OVERRIDE,\n"
      "CUBLAS_WORKSPACE_CONFIG, ...; docs/schema.md). GPU facts are null on the CPU. Exit 0, or 2 for an\n"
      "unknown or absent --device.");
  cli::NightlyOptions nightly;
  auto* nightly_command = app.add_subcommand(
      "nightly", "Run a pinned sweep, compare it with the previous night or a pinned baseline, write the database "
                 "and a markdown summary; exit 1 on a regression");
  nightly_command->add_option("config", nightly.config_path, "the nightly sweep config (configs/nightly.yaml)")
      ->required();
  auto* history = nightly_command->add_option(
      "--history", nightly.history_dir,
      "DIR of previous nights: compare with the newest finished nightly-*.db there, then copy tonight's database "
      "and summary in (a bucket mount is fine: SQLite never runs there)");
  auto* baseline = nightly_command->add_option("--baseline", nightly.baseline,
                                               "DATABASE[:RUN]: compare with this pinned run instead");
  history->excludes(baseline);
  nightly_command->add_option("--db", nightly.db_path,
                              "the night's database on local disk (default: nightly-<UTC stamp>.db here)");
  nightly_command->add_option("--summary", nightly.summary_path,
                              "where the markdown summary goes (default: the database's path with .md)");
  nightly_command->add_option("--summary-json", nightly.json_path,
                              "FILE: also write the night as JSON for CI (format attnsweep-nightly/1: verdict, exit "
                              "code, reasons, every flagged case with its numbers; docs/reproducibility.md)");
  nightly_command->add_option("--device", nightly.device, "auto, cpu, cuda or cuda:N (default: the config's)");
  add_same_time_options(*nightly_command, nightly.threshold, "PCT: a median that moved less than this is SAME (as in compare)",
                        nightly.min_change_us, "US: a median that moved less than this is SAME too (as in compare)");
  auto* window = nightly_command->add_option(
      "--window", nightly.window,
      "N: with --history, each case's time is judged against the last N good nights: the samples of the night whose "
      "median is the middle one (the lower middle of an even count); nights on which the case was suspect are left out");
  window->capture_default_str();
  auto* consecutive = nightly_command->add_option(
      "--consecutive", nightly.consecutive,
      "K: with --history, a time regression fails the night only when the case was slower than its window on K "
      "nights in a row; before that it is a WATCH item (exit 0)");
  consecutive->capture_default_str();
  nightly_command->footer(
      "The summary (attnsweep compare's markdown, headed by tonight's and the baseline's runs) is printed and\n"
      "written to --summary; with --history the database and summary are also copied there as\n"
      "nightly-<stamp>.db and .md. A first night (no finished nightly-*.db in DIR) compares nothing.\n"
      "With --history, status, counts, backend and numerics are compared with the newest good night (a\n"
      "change fails at once); times with the window of the last --window good nights, and a slowdown fails\n"
      "only on --consecutive nights in a row (a first slow night is a WATCH item). A good night: finished, on\n"
      "tonight's kind of device, no case beside another process on its GPU. attnsweep history DIR shows them.\n"
      "A case whose validity label is suspect (cases.validity) gets no time verdict and is listed apart.\n"
      "Exit codes: 0 no regression; 1 a regression, the sweep did not finish, no case matched the baseline,\n"
      "or the copy into DIR failed; 2 bad input (nothing ran); 4 INCONCLUSIVE (no regression, but cases\n"
      "measured beside another process could not be judged, fewer than half the cases timed on both nights\n"
      "were judged on time, or the environment changed in a fact that moves times: the allocator, TF32,\n"
      "CUDA_LAUNCH_BLOCKING, the power limit, the maximum SM clock); 130/143 SIGINT/SIGTERM after the sweep (the\n"
      "files written all the same). docs/reproducibility.md");
  cli::HistoryOptions history_options;
  auto* history_command = app.add_subcommand(
      "history", "The nights of a nightly --history folder side by side: each case's median and kernel count night "
                 "by night, the nights that changed marked with the environment differences that came with them");
  history_command->add_option("dir", history_options.history_dir, "the nightly --history folder (only read)")
      ->required();
  history_command
      ->add_option("--format", history_options.format,
                   "table, csv, json or markdown: one row per case and night (as query writes them)")
      ->check(CLI::IsMember(report::format_names()))
      ->capture_default_str();
  history_command->add_option("--html", history_options.html_path,
                              "FILE: also write one HTML page, a chart per case family (Chart.js embedded)");
  history_command->add_option("--last", history_options.last, "N: the newest N nights")->capture_default_str();
  history_command->add_option("--by", history_options.by,
                              "FACTS: the nights' versions as columns, to split or group them by: a comma-separated "
                              "list of torch, cuda, cudnn, driver, commit, attnsweep, image, op_library");
  history_command->add_flag("--culprits", history_options.culprits,
                            "instead of the nights: each change (compare's counted findings against the night before) "
                            "with the version facts that changed that night, like asv's find without re-running");
  add_same_time_options(*history_command, history_options.threshold,
                        "PCT: what counts as a changed time between two nights (as in compare)",
                        history_options.min_change_us, "US: as in compare");
  history_command->footer(
      "A night is marked changed for a case when attnsweep compare of it against the night before counts a\n"
      "finding (status, kernel counts, backend, numerics, or a FASTER or SLOWER time); the environment column\n"
      "then lists what differed between the two nights. energy_j (joules per pass) is a column when a night\n"
      "stored it (measure.energy_window_ms).\n"
      "Exit codes: 0; 1 a failure while reading; 2 bad input (no such folder, no readable night, a bad option).\n"
      "docs/reproducibility.md");
  cli::AcceptOptions accept_options;
  auto* accept_command = app.add_subcommand(
      "accept", "Record in a nightly --history folder that a change seen on one night is accepted for some cases: "
                "from then on their time window starts at that night");
  accept_command->add_option("dir", accept_options.history_dir, "the nightly --history folder")->required();
  accept_command
      ->add_option("--night", accept_options.night,
                   "the night the change was first seen: its stamp (20261205T031500Z) or file (nightly-<stamp>.db)")
      ->required();
  accept_command
      ->add_option("--cases", accept_options.cases,
                   "GLOB: the cases, by their label as summaries print it ('sdpa_cudnn 1x32/8x8192x128 *'); repeatable")
      ->required();
  accept_command->add_option("--reason", accept_options.reason, "why the change is kept, in words")->required();
  accept_command->add_option("--by", accept_options.by, "who accepts it (default: $USER)");
  accept_command->footer(
      "Writes DIR/accept-<UTC stamp>.json once (never over a file; a bucket mount is fine) and deletes nothing.\n"
      "nightly --history then judges the covered cases' times only against nights from the accepted one on,\n"
      "and its summary lists the acceptance; history marks it on that night (ACCEPTED in the changed column).\n"
      "Exit codes: 0 recorded; 2 bad input (no such folder or night, no pattern or reason; nothing written).\n"
      "docs/reproducibility.md, \"Accepting a change\"");
  std::string variants_device;
  auto* variants_command = app.add_subcommand("variants", "List the attention variants and where they run");
  variants_command->add_option("--device", variants_device, "auto (default), cpu, cuda or cuda:N");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    if (dynamic_cast<const CLI::Success*>(&error)) return app.exit(error) == 0 ? kExitOk : kExitBadInput;  // --help, --version
    std::cerr << "error: " << usage_error(app, error, argc, argv) << "\n";
    return kExitBadInput;
  }
  log::set_level(log_level);
  if (*run_command) {
    run.resume = run_command->count("--resume") > 0;
    if (run.resume && run.resume_run.empty()) run.resume_run = "latest";
    return cli::run_command(run);
  }
  if (*query_command) return cli::query_command(query);
  if (*merge_command) return cli::merge_command(merge);
  if (*compare_command) return cli::compare_command(compare);
  if (*report_command) return cli::report_command(report);
  if (*launch_command) return cli::launch_command(launch);
  if (*collect_command) return cli::collect_command(collect);
  if (*worker_command) return cli::worker_command(worker);
  if (*plan_command) return cli::plan_command(plan);
  if (*variants_command) return cli::variants_command(variants_device);
  if (*env_command) return cli::env_command(env_device);
  if (*history_command) return cli::history_command(history_options);
  if (*accept_command) return cli::accept_command(accept_options);
  if (*nightly_command) {
    nightly.window_given = window->count() > 0;
    nightly.consecutive_given = consecutive->count() > 0;
    return cli::nightly_command(nightly);
  }
  return kExitBadInput;
}
