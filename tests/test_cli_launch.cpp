// `attnsweep launch hf` and `attnsweep collect` end to end, against a recording
// stand-in for the hf command line (tests/support/fake_hf) first on PATH: the
// exact argv of every hf call, the dry-run text, the refusals and exit codes,
// retry-once on a failed submission, --wait, the token never leaking, and
// collect merging real shard databases published by `run --publish`.
#include <gtest/gtest.h>

#include <SQLiteCpp/SQLiteCpp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/cli_test.hpp"
#include "tests/support/file_text.hpp"
#include "tests/support/run_attnsweep.hpp"
#include "tests/support/shard_sweeps.hpp"

namespace {

namespace fs = std::filesystem;
using Argv = std::vector<std::string>;

using attnsweep::testing::Outcome;

Outcome run(const std::string& arguments, const std::string& environment = "") {
  return attnsweep::testing::run_attnsweep(arguments, environment);
}

const char* const kSweep = attnsweep::testing::kTwelveCaseSweep;

// The same 12 cases, each timed for at least 5 minutes: 60 minutes by the cost model.
const char* const kLongSweep = R"(name: long
variants: [naive, sdpa_math, sdpa_flash]
dtypes: [fp32]
shapes: {batch: 1, heads: 2, seq_len: [16, 32, 48, 64], head_dim: 8}
measure: {warmup: 1, profiled_forwards: 1, min_samples: 3, max_samples: 100000, min_gpu_seconds: 300, max_case_seconds: 600, cuda_graph: false}
)";

// The image the tests launch: no public attnsweep image exists, so every launch names one (or --from-source).
const std::string kImage = "docker.io/acme/attnsweep:0.1.0";

// What `hf jobs run` is given for shard K of N of sweep s1 in hf://buckets/acme/bench/s1:
// every hf option, then "--" (hf reads no option after it), the image and the job's command.
Argv job_argv(int k, int n, const Argv& options, const std::string& image = kImage) {
  const std::string shard = std::to_string(k) + "-of-" + std::to_string(n);
  Argv argv = {"jobs", "run"};
  argv.insert(argv.end(), options.begin(), options.end());
  const Argv rest = {"-e", "ATTNSWEEP_IMAGE=" + image, "-v", "hf://buckets/acme/bench/s1:/results", "-l", "attnsweep-sweep=s1", "-l",
                     "attnsweep-shard=" + std::to_string(k), "-d", "--", image, "attnsweep", "run", "/results/config.yaml",
                     "--shard", std::to_string(k) + "/" + std::to_string(n), "--sweep-id", "s1", "--db",
                     "/tmp/attnsweep/shard-" + shard + ".db", "--traces", "/tmp/attnsweep/traces", "--publish",
                     "/results"};
  argv.insert(argv.end(), rest.begin(), rest.end());
  return argv;
}

const Argv kHardware = {"jobs", "hardware", "--format", "json"};

class HfLaunch : public attnsweep::testing::CliTest {
 protected:
  HfLaunch() : CliTest("attnsweep-launch") {}

  void SetUp() override {
    fs::create_directories(path("bin"));
    fs::create_symlink(std::string(ATTNSWEEP_SOURCE_DIR) + "/tests/support/fake_hf", path("bin/hf"));
    fs::create_directories(path("bucket"));
    fs::create_directories(path("empty"));
  }

  // The fake hf first on PATH, retries without a pause, and `extra` (e.g. "FAKE_HF_FAIL_SUBMISSIONS=1 ").
  std::string environment(const std::string& extra = "") const {
    return "PATH='" + path("bin") + "':\"$PATH\" FAKE_HF_LOG='" + path("hf.log") + "' FAKE_HF_BUCKET_ROOT='" +
           path("bucket") + "' ATTNSWEEP_HF_RETRY_SECONDS=0 " + extra;
  }

  Outcome launch(const std::string& arguments, const std::string& extra = "") {
    return run("launch hf " + arguments, environment(extra));
  }

  // Every hf call recorded so far, its arguments in order.
  std::vector<Argv> calls() const {
    std::vector<Argv> recorded;
    std::ifstream log(path("hf.log"));
    Argv current;
    for (std::string line; std::getline(log, line);) {
      if (line == "@@") {
        recorded.push_back(current);
        current.clear();
      } else {
        current.push_back(line);
      }
    }
    return recorded;
  }

  std::string log_text() const { return attnsweep::testing::read_file(path("hf.log")); }

  // Nothing started: hf was not run at all, and nothing is in the bucket.
  void expect_hf_untouched() const {
    EXPECT_TRUE(calls().empty()) << log_text();
    EXPECT_TRUE(fs::is_empty(path("bucket")));
  }

  // A dry run of `arguments`: exit 0, exactly `expected` printed, and stable (the
  // same again); it starts nothing, not even hf jobs hardware (no network call).
  void expect_dry_run_prints(const std::string& arguments, const std::string& expected) {
    const Outcome outcome = launch(arguments);
    ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
    EXPECT_EQ(outcome.output, expected);
    EXPECT_EQ(launch(arguments).output, expected);
    expect_hf_untouched();
  }
};

// Issue 37: the jobs get the config file alone; a config naming claims files is refused
// (exit 2, one line) before hf runs, rather than failing in every job.
TEST_F(HfLaunch, AConfigWithClaimsIsRefusedBeforeHfRuns) {
  write("published.yaml", "source: {title: T}\nclaims:\n  - name: a\n    case: {variant: naive, batch: 1, heads: 2, "
                          "seq_len: 16, head_dim: 8, dtype: fp32, causal: true}\n    tflops: 1\n");
  const std::string config = write("claimed.yaml", std::string(kSweep) + "claims: [published.yaml]\n");
  const Outcome outcome = launch(config + " --flavor h200 --shards 2 --results hf://buckets/acme/bench --sweep-id s3 "
                                          "--dry-run --image " + kImage);
  EXPECT_EQ(outcome.exit_code, 2) << outcome.output;
  EXPECT_NE(outcome.output.find("claimed.yaml: claims: launch uploads the config alone, so its claims files "
                                "(published.yaml) would not be found in the jobs"),
            std::string::npos)
      << outcome.output;
  expect_hf_untouched();
}

TEST_F(HfLaunch, DryRunPrintsTheExactCommandsAndEachShardsEstimateAndStartsNothing) {
  const std::string config = write("my sweep.yaml", kSweep);
  const std::string arguments = "'" + config + "' --flavor h200 --shards 3 --results hf://buckets/acme/bench/nightly/run-7 "
                                "--sweep-id s1 --timeout 1h --image " + kImage + " --dry-run";
  std::string expected =
      "# sweep s1: 3 shards of 12 cases on h200, --timeout 1h; results in hf://buckets/acme/bench/nightly/run-7\n";
  for (int k = 0; k < 3; ++k) {
    expected += "# shard " + std::to_string(k) +
                "/3: 4 cases, expected 3.0 min (0.8 s on one H200 by the cost model + 3.0 min job start)\n";
  }
  expected += "hf buckets cp '" + config + "' hf://buckets/acme/bench/nightly/run-7/config.yaml\n";
  for (int k = 0; k < 3; ++k) {
    const std::string shard = std::to_string(k);
    expected += "hf jobs run --flavor h200 --timeout 1h -e ATTNSWEEP_SWEEP_ID=s1 -e ATTNSWEEP_IMAGE=" + kImage +
                " -v hf://buckets/acme/bench/nightly/run-7:/results "
                "-l attnsweep-sweep=s1 -l attnsweep-shard=" + shard + " -d -- " + kImage + " attnsweep run "
                "/results/config.yaml --shard " + shard + "/3 --sweep-id s1 --db /tmp/attnsweep/shard-" + shard +
                "-of-3.db --traces /tmp/attnsweep/traces --publish /results\n";
  }
  expect_dry_run_prints(arguments, expected);
}

// A flavor of several GPUs: each shard's job spreads its cases over all of them.
TEST_F(HfLaunch, AFlavorOfSeveralGpusRunsEachShardOnAllOfThem) {
  const std::string config = write("sweep.yaml", kSweep);
  const Outcome outcome = launch(config + " --flavor h200x2 --shards 2 --results hf://buckets/acme/bench --sweep-id s2 --dry-run"
                                 " --image " + kImage);
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  EXPECT_NE(outcome.output.find("--shard 0/2 --sweep-id s2 --db /tmp/attnsweep/shard-0-of-2.db --traces "
                                "/tmp/attnsweep/traces --publish /results --gpus all\n"), std::string::npos) << outcome.output;
  const Outcome single = launch(config + " --flavor h200 --shards 2 --results hf://buckets/acme/bench --sweep-id s2 --dry-run"
                                " --image " + kImage);
  EXPECT_EQ(single.output.find("--gpus"), std::string::npos) << single.output;
  // A name ending in x1 is one GPU (issue 22): l4x1 and l40sx1 run as h200 does; x4 and x8 spread.
  for (const std::string flavor : {"l4x1", "l40sx1"}) {
    const Outcome one = launch(config + " --flavor " + flavor + " --shards 2 --results hf://buckets/acme/bench --sweep-id s2 "
                               "--dry-run --image " + kImage);
    ASSERT_EQ(one.exit_code, 0) << one.output;
    EXPECT_EQ(one.output.find("--gpus"), std::string::npos) << one.output;
  }
  for (const std::string flavor : {"l4x4", "a100x4", "l40sx8", "a10g-largex2", "rtx-pro-6000x4"}) {
    const Outcome several = launch(config + " --flavor " + flavor + " --shards 2 --results hf://buckets/acme/bench "
                                   "--sweep-id s2 --dry-run --image " + kImage);
    ASSERT_EQ(several.exit_code, 0) << several.output;
    EXPECT_NE(several.output.find(" --publish /results --gpus all\n"), std::string::npos) << flavor << "\n" << several.output;
  }
}

TEST_F(HfLaunch, UploadsTheConfigThenStartsOneLabelledJobPerShard) {
  const std::string config = write("sweep.yaml", kSweep);
  const Outcome outcome = launch(config + " --flavor h200 --shards 3 --results hf://buckets/acme/bench --sweep-id s1 "
                                 "--timeout 2h --namespace acme-lab --image registry.example/attnsweep:dev");
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  const Argv options = {"--flavor", "h200", "--timeout", "2h", "--namespace", "acme-lab", "-e", "ATTNSWEEP_SWEEP_ID=s1"};
  const std::string image = "registry.example/attnsweep:dev";
  EXPECT_EQ(calls(), (std::vector<Argv>{kHardware,
                                        {"buckets", "cp", config, "hf://buckets/acme/bench/s1/config.yaml"},
                                        job_argv(0, 3, options, image), job_argv(1, 3, options, image),
                                        job_argv(2, 3, options, image)}));
  // PREFIX defaulted to the sweep id; the config is there for the jobs to read.
  EXPECT_EQ(attnsweep::testing::read_file(path("bucket/acme/bench/s1/config.yaml")), kSweep);
  EXPECT_EQ(outcome.output,
            "sweep s1: 3 shards of 12 cases on h200, --timeout 2h; results in hf://buckets/acme/bench/s1\n"
            "config uploaded to hf://buckets/acme/bench/s1/config.yaml\n"
            "shard 0/3: job 690000000000000000000001 started (expected 3.0 min)\n"
            "shard 1/3: job 690000000000000000000002 started (expected 3.0 min)\n"
            "shard 2/3: job 690000000000000000000003 started (expected 3.0 min)\n"
            "3 jobs started; watch: hf jobs ps --namespace acme-lab --label attnsweep-sweep=s1 (logs: hf jobs logs "
            "--namespace acme-lab JOB_ID)\n"
            "when they end: attnsweep collect hf://buckets/acme/bench/s1 s1.db\n");
}

TEST_F(HfLaunch, TheTokenGoesOnlyAsTheSecretsNameAndNeverLeaks) {
  const std::string config = write("sweep.yaml", kSweep);
  const std::string token = "hf_FakeTokenValue0123456789";
  const std::string env = "HF_TOKEN=" + token + " ";
  const Outcome with_token = launch(config + " --flavor h200 --shards 2 --results hf://buckets/acme/bench --sweep-id s1 "
                                    "--token --image " + kImage, env);
  ASSERT_EQ(with_token.exit_code, 0) << with_token.output;
  const Argv options = {"--flavor", "h200", "--timeout", "30m", "-e", "ATTNSWEEP_SWEEP_ID=s1", "-s", "HF_TOKEN"};
  const auto recorded = calls();
  ASSERT_EQ(recorded.size(), 4u);
  EXPECT_EQ(recorded[2], job_argv(0, 2, options));
  EXPECT_EQ(recorded[3], job_argv(1, 2, options));
  // Without --token no secret at all.
  const Outcome without = launch(config + " --flavor h200 --shards 2 --results hf://buckets/acme/bench --sweep-id s1"
                                 " --image " + kImage, env);
  ASSERT_EQ(without.exit_code, 0) << without.output;
  EXPECT_EQ(calls().back(), job_argv(1, 2, {"--flavor", "h200", "--timeout", "30m", "-e", "ATTNSWEEP_SWEEP_ID=s1"}));
  const Outcome dry = launch(config + " --flavor h200 --shards 2 --results hf://buckets/acme/bench --sweep-id s1 "
                             "--token --dry-run --image " + kImage, env);
  ASSERT_EQ(dry.exit_code, 0) << dry.output;
  EXPECT_NE(dry.output.find(" -s HF_TOKEN -e ATTNSWEEP_IMAGE="), std::string::npos) << dry.output;
  // A refusal and a failed submission repeat nothing of the token either.
  const Outcome failed = launch(config + " --flavor h200 --shards 2 --results hf://buckets/acme/bench --sweep-id s1 "
                                "--token --image " + kImage, env + "FAKE_HF_FAIL_SUBMISSIONS=9 ");
  EXPECT_EQ(failed.exit_code, 1) << failed.output;
  for (const auto& output : {with_token.output, without.output, dry.output, failed.output, log_text()}) {
    EXPECT_EQ(output.find(token), std::string::npos) << output;
  }
}

TEST_F(HfLaunch, AnUnknownFlavorIsRefusedWithTheNearestName) {
  const std::string config = write("sweep.yaml", kSweep);
  const std::string arguments = config + " --shards 2 --results hf://buckets/acme/bench --sweep-id s1 --image " + kImage +
                                " --flavor ";
  // The names `hf jobs hardware` gives.
  const Outcome typo = launch(arguments + "h100");
  EXPECT_EQ(typo.exit_code, 2) << typo.output;
  EXPECT_EQ(typo.output, "error: --flavor: unknown flavor 'h100' (did you mean h200?); known: cpu-basic, cpu-upgrade, "
                         "t4-small, a100-large, h200, h200x2 (as hf jobs hardware lists them)\n");
  EXPECT_EQ(calls(), (std::vector<Argv>{kHardware}));
  // hf cannot list them: the list known when attnsweep was built, and why.
  const Outcome offline = launch(arguments + "h100", "FAKE_HF_HARDWARE_FAILS=1 ");
  EXPECT_EQ(offline.exit_code, 2) << offline.output;
  EXPECT_EQ(offline.output.rfind("error: --flavor: unknown flavor 'h100' (did you mean h200?); known: cpu-basic, ", 0), 0u)
      << offline.output;
  EXPECT_NE(offline.output.find(", h200x8, rtx-pro-6000, "), std::string::npos) << offline.output;
  EXPECT_NE(offline.output.find(", rtx-pro-6000x8 (attnsweep's built-in list: hf jobs hardware did not answer (Error: 401 "
                                "Client Error: Unauthorized))\n"), std::string::npos) << offline.output;
  // A dry run asks hf nothing: the built-in list, and it says so.
  fs::remove(path("hf.log"));
  const Outcome dry = launch(arguments + "h100 --dry-run");
  EXPECT_EQ(dry.exit_code, 2) << dry.output;
  EXPECT_NE(dry.output.find(", rtx-pro-6000x8 (attnsweep's built-in list: a dry run asks hf nothing; a launch checks hf "
                            "jobs hardware)\n"), std::string::npos) << dry.output;
  EXPECT_EQ(launch(arguments + "rtx-pro-6000x8 --dry-run").exit_code, 0);
  EXPECT_TRUE(calls().empty()) << log_text();
  // A flavor hf lists that attnsweep does not know: refused by a dry run, taken by a launch.
  const Outcome new_flavor_dry = launch(arguments + "b200 --dry-run", "FAKE_HF_HARDWARE=cpu-basic,h200,b200 ");
  EXPECT_EQ(new_flavor_dry.exit_code, 2) << new_flavor_dry.output;
  EXPECT_EQ(new_flavor_dry.output.rfind("error: --flavor: unknown flavor 'b200'", 0), 0u) << new_flavor_dry.output;
  const Outcome new_flavor = launch(arguments + "b200", "FAKE_HF_HARDWARE=cpu-basic,h200,b200 ");
  EXPECT_EQ(new_flavor.exit_code, 0) << new_flavor.output;
  EXPECT_EQ(calls().size(), 4u);  // hardware, the config, two jobs
}

TEST_F(HfLaunch, AShardThatWouldOutrunTheTimeoutIsRefusedWithTheEstimate) {
  const std::string config = write("long.yaml", kLongSweep);
  const std::string arguments = config + " --flavor h200 --results hf://buckets/acme/bench --sweep-id s1 --image " +
                                kImage + " ";
  const Outcome one = launch(arguments + "--shards 1");
  EXPECT_EQ(one.exit_code, 2) << one.output;
  EXPECT_EQ(one.output, "error: shard 0/1 is expected to take 63.0 min (60.0 min on one H200 by the cost model + 3.0 "
                        "min job start), over --timeout 30m (30.0 min); use --shards 3 or --timeout 70m\n");
  const Outcome two = launch(arguments + "--shards 2 --timeout 1800");
  EXPECT_EQ(two.exit_code, 2) << two.output;
  EXPECT_NE(two.output.find("error: shard 0/2 is expected to take 33.0 min (30.0 min on one H200 by the cost model"),
            std::string::npos) << two.output;
  EXPECT_NE(two.output.find("over --timeout 1800 (30.0 min); use --shards 3 or --timeout 40m"), std::string::npos)
      << two.output;
  // The suggestions fit.
  const Outcome three = launch(arguments + "--shards 3 --dry-run");
  EXPECT_EQ(three.exit_code, 0) << three.output;
  EXPECT_NE(three.output.find("# shard 2/3: 4 cases, expected 23.0 min (20.0 min on one H200 by the cost model + 3.0 "
                              "min job start)\n"), std::string::npos) << three.output;
  EXPECT_EQ(launch(arguments + "--shards 1 --timeout 70m --dry-run").exit_code, 0);
  EXPECT_EQ(launch(arguments + "--shards 1 --timeout 1.1h --dry-run").exit_code, 0);
  // Shorter than a job's start: only a longer timeout helps.
  const Outcome tiny = launch(arguments + "--shards 12 --timeout 2m");
  EXPECT_EQ(tiny.exit_code, 2) << tiny.output;
  EXPECT_NE(tiny.output.find("over --timeout 2m (2.0 min); use --timeout "), std::string::npos) << tiny.output;
  for (const auto& call : calls()) EXPECT_EQ(call, kHardware);
}

TEST_F(HfLaunch, BadResultsSweepIdTimeoutAndShardsAreRefused) {
  const std::string config = write("sweep.yaml", kSweep);
  const auto refused = [&](const std::string& options, const std::string& message) {
    const Outcome outcome = launch(config + " --flavor h200 --image " + kImage + " " + options);
    EXPECT_EQ(outcome.exit_code, 2) << options << "\n" << outcome.output;
    EXPECT_EQ(outcome.output, "error: " + message + "\n") << options;
  };
  const std::string expected = "; expected hf://buckets/ORG/NAME[/PREFIX] (letters, digits, '.', '_', '-')";
  refused("--shards 2 --results hf://datasets/acme/bench",
          "--results: 'hf://datasets/acme/bench' is not a bucket (jobs write only to buckets)" + expected);
  refused("--shards 2 --results s3://acme/bench", "--results: 's3://acme/bench' is not a bucket URL" + expected);
  refused("--shards 2 --results hf://buckets/acme", "--results: 'hf://buckets/acme' names no bucket" + expected);
  refused("--shards 2 --results hf://buckets/acme/bench/a:b",
          "--results: 'hf://buckets/acme/bench/a:b': 'a:b' is not allowed" + expected);
  refused("--shards 2 --results hf://buckets/acme/bench --sweep-id a/b",
          "--sweep-id: 'a/b' is not a valid sweep id; letters, digits, '_' and '-', 1 to 64 characters, starting "
          "with a letter or digit (it becomes a job label and a bucket folder)");
  refused("--shards 2 --results hf://buckets/acme/bench --timeout 2x",
          "--timeout: invalid duration '2x'; whole seconds, or a number with s, m, h or d (e.g. 5400, 90m, 1.5h)");
  refused("--shards 0 --results hf://buckets/acme/bench", "--shards: 0 is out of range; 1 to 10000");
  refused("--shards 13 --results hf://buckets/acme/bench",
          config + ": 13 shards for a plan of 12 cases; use at most 12 shards");
  const Outcome backend = run("launch k8s " + config + " --flavor h200 --shards 2 --results hf://buckets/a/b",
                              environment());
  EXPECT_EQ(backend.exit_code, 2);
  EXPECT_EQ(backend.output, "error: launch: unknown backend 'k8s'; known: hf (Hugging Face Jobs)\n");
  for (const auto& call : calls()) EXPECT_EQ(call, kHardware);
}

// Issue 21, finding 18: an --image or --namespace starting with '-' reached hf
// as an option of its own ("-d --env=EVIL=1 attnsweep run ..."); so would a
// schedule, a config file or a --keep folder named so.
TEST_F(HfLaunch, ValuesStartingWithADashNeverReachHfAsOptions) {
  const std::string config = write("sweep.yaml", kSweep);
  const std::string base = config + " --flavor h200 --shards 1 --results hf://buckets/acme/bench --sweep-id s1 ";
  for (const auto& [options, message] : std::vector<std::pair<std::string, std::string>>{
           {"--image=--env=EVIL=1", "error: --image: '--env=EVIL=1' is not an image name; allowed: a Docker Hub "
                                    "image or a Space's, [REGISTRY/]NAME[:TAG][@sha256:DIGEST] with NAME of lowercase "
                                    "letters, digits and '.', '_', '-' between them, parts separated by '/' (e.g. "
                                    "docker.io/ORG/attnsweep:TAG, hf.co/spaces/ORG/NAME)\n"},
           {"--image='my image'", "error: --image: 'my image' is not an image name; allowed: "},
           {"--image " + kImage + " --namespace=-x", "error: --namespace: '-x' is not a user or organization name; allowed: letters, "
                              "digits, '-', '_' and '.', starting with a letter or digit (hf would read a leading "
                              "'-' as an option)\n"},
           {"--image " + kImage + " --namespace='acme lab'", "error: --namespace: 'acme lab' is not a user or organization name"},
           {"--image " + kImage + " --schedule='-1 * * * *'", "error: --schedule: '-1 * * * *' is not a schedule; allowed: "},
           {"--image " + kImage + " --schedule='0 3 * * -1'", "error: --schedule: '0 3 * * -1' is not a schedule; allowed: "}}) {
    for (const std::string dry : {"", "--dry-run"}) {
      SCOPED_TRACE(options + " " + dry);
      const Outcome outcome = launch(base + options + " " + dry);
      EXPECT_EQ(outcome.exit_code, 2) << outcome.output;
      EXPECT_EQ(outcome.output.rfind(message, 0), 0u) << outcome.output;
      EXPECT_EQ(std::count(outcome.output.begin(), outcome.output.end(), '\n'), 1) << outcome.output;
    }
  }
  EXPECT_TRUE(fs::is_empty(path("bucket")));
  for (const auto& call : calls()) EXPECT_EQ(call, kHardware);
  // Names hf accepts stay accepted.
  EXPECT_EQ(launch(base + "--namespace acme-lab.eu_1 --image hf.co/spaces/acme/attnsweep:v1 --dry-run").exit_code, 0);
  // A config file named "-..." goes to hf as "./-...".
  write("-dash.yaml", kSweep);
  const Outcome dash = run("launch hf --flavor h200 --shards 1 --results hf://buckets/acme/bench --sweep-id s1 --image " +
                               kImage + " -- -dash.yaml",
                           "cd '" + path("") + "' && " + environment());
  ASSERT_EQ(dash.exit_code, 0) << dash.output;
  EXPECT_EQ(calls().back(), job_argv(0, 1, {"--flavor", "h200", "--timeout", "30m", "-e", "ATTNSWEEP_SWEEP_ID=s1"}));
  EXPECT_EQ(calls()[calls().size() - 2], (Argv{"buckets", "cp", "./-dash.yaml", "hf://buckets/acme/bench/s1/config.yaml"}));
}

TEST_F(HfLaunch, WithoutHfOnPathItSaysHowToInstallIt) {
  const std::string config = write("sweep.yaml", kSweep);
  const std::string arguments = "launch hf " + config + " --flavor h200 --shards 2 --results hf://buckets/acme/bench "
                                "--sweep-id s1 --image " + kImage;
  const std::string no_hf = "PATH='" + path("empty") + "' ";
  const Outcome missing = run(arguments, no_hf);
  EXPECT_EQ(missing.exit_code, 1) << missing.output;
  EXPECT_EQ(missing.output, "error: hf not found on PATH; install huggingface_hub>=1.24 (pip install -U huggingface_hub)\n");
  // A dry run needs no hf: the known flavors, the same commands.
  const Outcome dry = run(arguments + " --dry-run", no_hf);
  EXPECT_EQ(dry.exit_code, 0) << dry.output;
  EXPECT_EQ(dry.output, launch(config + " --flavor h200 --shards 2 --results hf://buckets/acme/bench --sweep-id s1 "
                               "--image " + kImage + " --dry-run").output);
  const Outcome collect = run("collect hf://buckets/acme/bench/s1 " + path("out.db"), no_hf);
  EXPECT_EQ(collect.exit_code, 1) << collect.output;
  EXPECT_EQ(collect.output, missing.output);
}

TEST_F(HfLaunch, AFailedSubmissionIsTriedOnceMore) {
  const std::string config = write("sweep.yaml", kSweep);
  const Outcome outcome = launch(config + " --flavor h200 --shards 2 --results hf://buckets/acme/bench --sweep-id s1"
                                 " --image " + kImage, "FAKE_HF_FAIL_SUBMISSIONS=1 ");
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  EXPECT_NE(outcome.output.find("warning: shard 0/2: hf failed (Error: 503 Server Error: Service Unavailable for url: "
                                "https://huggingface.co/api/jobs/user); trying again in 0.0 s\n"), std::string::npos)
      << outcome.output;
  EXPECT_NE(outcome.output.find("shard 0/2: job 690000000000000000000002 started"), std::string::npos) << outcome.output;
  EXPECT_NE(outcome.output.find("shard 1/2: job 690000000000000000000003 started"), std::string::npos) << outcome.output;
  const Argv options = {"--flavor", "h200", "--timeout", "30m", "-e", "ATTNSWEEP_SWEEP_ID=s1"};
  const auto recorded = calls();
  ASSERT_EQ(recorded.size(), 5u);
  EXPECT_EQ(recorded[2], job_argv(0, 2, options));
  EXPECT_EQ(recorded[3], job_argv(0, 2, options));  // the same submission again
  EXPECT_EQ(recorded[4], job_argv(1, 2, options));
}

TEST_F(HfLaunch, ASubmissionFailingTwiceStopsTheLaunchNamingTheShards) {
  const std::string config = write("sweep.yaml", kSweep);
  const std::string arguments = config + " --flavor h200 --shards 3 --results hf://buckets/acme/bench --sweep-id s1"
                                " --image " + kImage;
  // Shard 0 starts; shard 1 fails twice; shard 2 is never submitted.
  const Outcome stopped = launch(arguments, "FAKE_HF_FAIL_AT=2,3 ");
  EXPECT_EQ(stopped.exit_code, 1) << stopped.output;
  EXPECT_NE(stopped.output.find("shard 0/3: job 690000000000000000000001 started"), std::string::npos);
  EXPECT_NE(stopped.output.find("error: shard 1/3: hf jobs run failed twice: Error: 503 Server Error: Service "
                                "Unavailable for url: https://huggingface.co/api/jobs/user; started: 0/3 (job "
                                "690000000000000000000001) (still running); not started: 1/3, 2/3\n"),
            std::string::npos) << stopped.output;
  const auto recorded = calls();
  ASSERT_EQ(recorded.size(), 5u);  // hardware, cp, shard 0, shard 1 twice
  EXPECT_EQ(recorded[4], recorded[3]);
  EXPECT_EQ(recorded[4][recorded[4].size() - 9], "1/3");
  // The first shard failing twice: nothing runs.
  fs::remove(path("hf.log.submissions"));
  const Outcome none = launch(arguments, "FAKE_HF_FAIL_SUBMISSIONS=2 ");
  EXPECT_EQ(none.exit_code, 1) << none.output;
  EXPECT_NE(none.output.find("error: shard 0/3: hf jobs run failed twice: Error: 503 Server Error: Service Unavailable "
                             "for url: https://huggingface.co/api/jobs/user; no job was started; not started: 0/3, "
                             "1/3, 2/3\n"), std::string::npos) << none.output;
}

TEST_F(HfLaunch, WaitFollowsTheJobsAndReportsEachOnesStage) {
  const std::string config = write("sweep.yaml", kSweep);
  const std::string arguments = config + " --flavor h200 --shards 2 --results hf://buckets/acme/bench --sweep-id s1 "
                                "--namespace acme-lab --wait --image " + kImage;
  const Outcome completed = launch(arguments);
  ASSERT_EQ(completed.exit_code, 0) << completed.output;
  EXPECT_NE(completed.output.find("waiting for the jobs to end (hf jobs wait, stopped after 90.0 min: --timeout 30m + "
                                  "60.0 min)\n"
                                  "shard 0/2: job 690000000000000000000001 COMPLETED\n"
                                  "shard 1/2: job 690000000000000000000002 COMPLETED\n"
                                  "all 2 jobs completed; collect: attnsweep collect hf://buckets/acme/bench/s1 s1.db\n"),
            std::string::npos) << completed.output;
  EXPECT_EQ(calls().back(), (Argv{"jobs", "wait", "--format", "json", "--namespace", "acme-lab",
                                  "690000000000000000000001", "690000000000000000000002"}));
  const Outcome failed = launch(arguments, "FAKE_HF_STAGES=ERROR,COMPLETED ");
  EXPECT_EQ(failed.exit_code, 1) << failed.output;
  EXPECT_NE(failed.output.find("shard 0/2: job 690000000000000000000003 ERROR: Job failed with exit code: 1\n"
                               "shard 1/2: job 690000000000000000000004 COMPLETED\n"), std::string::npos)
      << failed.output;
  EXPECT_NE(failed.output.find("error: 1 of 2 jobs did not complete: shard 0/2 (job 690000000000000000000003, ERROR); "
                               "collect what was published: attnsweep collect hf://buckets/acme/bench/s1 s1.db\n"),
            std::string::npos) << failed.output;
}

// --from-source: a git checkout holding container/job-from-source.sh (the one
// of this source tree), committed; the stock image; the job's command.
const char* const kStockImage = "debian:bookworm-slim";
const char* const kBootstrap =
    "mkdir -p /tmp/attnsweep-job && tar -xzf /results/attnsweep-src.tar.gz -C /tmp/attnsweep-job "
    "container/job-from-source.sh && exec bash /tmp/attnsweep-job/container/job-from-source.sh \"$@\"";

std::string single_quoted(const std::string& word) {
  std::string text = "'";
  for (const char c : word) text += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return text + "'";
}

// Runs a shell command line; its output (stdout and stderr) and exit code.
Outcome shell(const std::string& command) {
  Outcome outcome;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  std::array<char, 4096> buffer{};
  while (fgets(buffer.data(), buffer.size(), pipe)) outcome.output += buffer.data();
  const int status = pclose(pipe);
  outcome.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return outcome;
}

std::string file_text(const std::string& file) { return attnsweep::testing::read_file(file); }

// PREFIX, six random letters or digits (mkstemp's), ".tar.gz".
bool is_private_archive_name(const std::string& name, const std::string& prefix) {
  const std::string suffix = ".tar.gz";
  if (name.size() != prefix.size() + 6 + suffix.size() || name.rfind(prefix, 0) != 0) return false;
  if (name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) return false;
  return std::all_of(name.begin() + static_cast<long>(prefix.size()), name.end() - static_cast<long>(suffix.size()),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; });
}

class HfLaunchFromSource : public HfLaunch {
 protected:
  // The GPU machine's image may have no git: the tests that make a checkout skip there.
  static bool git_available() { return shell("git --version").exit_code == 0; }
  // A git checkout at `name` whose HEAD holds the job's script and a build.sh; its top folder (canonical) and sha.
  std::string make_checkout(const std::string& name, bool with_script = true) {
    const std::string top = path(name);
    fs::create_directories(top + "/container");
    if (with_script) {
      fs::copy_file(std::string(ATTNSWEEP_SOURCE_DIR) + "/container/job-from-source.sh", top + "/container/job-from-source.sh");
      fs::copy_file(std::string(ATTNSWEEP_SOURCE_DIR) + "/container/build.sh", top + "/container/build.sh");
    } else {
      write(name + "/README", "not attnsweep\n");
    }
    const Outcome made = shell("cd " + single_quoted(top) + " && git init -q . && git add -A && git -c user.name=t "
                               "-c user.email=t@example.com -c commit.gpgsign=false commit -q -m init");
    EXPECT_EQ(made.exit_code, 0) << made.output;
    return fs::canonical(top).string();
  }
  std::string head_of(const std::string& top) {
    std::string sha = shell("git -C " + single_quoted(top) + " rev-parse --short=12 HEAD").output;
    while (!sha.empty() && sha.back() == '\n') sha.pop_back();
    return sha;
  }
  std::string tmp_environment() {
    fs::create_directories(path("tmp"));
    return "TMPDIR='" + path("tmp") + "' ";
  }
};

TEST_F(HfLaunchFromSource, DryRunPrintsTheArchiveBothUploadsAndTheJobsThatBuildOnTheStockImage) {
  if (!git_available()) GTEST_SKIP() << "git not on PATH";
  const std::string config = write("sweep.yaml", kSweep);
  const std::string top = make_checkout("checkout");
  const std::string sha = head_of(top);
  ASSERT_EQ(sha.size(), 12u);
  // --source may name any folder of the checkout: its top is archived (git archive in a subfolder would take only that).
  const Outcome outcome = launch(config + " --flavor h200 --shards 3 --results hf://buckets/acme/bench --sweep-id s1 "
                                 "--timeout 1h --from-source --source " + path("checkout/container") + " --dry-run",
                                 tmp_environment());
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  // The archive's file gets its random name when a launch makes it: the dry run shows the pattern.
  const std::string archive = path("tmp") + "/attnsweep-src-s1-XXXXXX.tar.gz";
  std::string expected = "# sweep s1: 3 shards of 12 cases on h200, --timeout 1h; results in hf://buckets/acme/bench/s1\n";
  for (int k = 0; k < 3; ++k) {
    expected += "# shard " + std::to_string(k) + "/3: 4 cases, expected 13.0 min (0.8 s on one H200 by the cost model "
                "+ 3.0 min job start + 10.0 min install and build)\n";
  }
  expected += "git -C " + top + " archive --format=tar.gz HEAD > " + archive + "\n";
  expected += "hf buckets cp " + config + " hf://buckets/acme/bench/s1/config.yaml\n";
  expected += "hf buckets cp " + archive + " hf://buckets/acme/bench/s1/attnsweep-src.tar.gz\n";
  for (int k = 0; k < 3; ++k) {
    const std::string shard = std::to_string(k);
    expected += "hf jobs run --flavor h200 --timeout 1h -e ATTNSWEEP_SWEEP_ID=s1 -e ATTNSWEEP_GIT_SHA=" + sha +
                " -e ATTNSWEEP_IMAGE=" + kStockImage + " -v hf://buckets/acme/bench/s1:/results -l attnsweep-sweep=s1 "
                "-l attnsweep-shard=" + shard + " -d -- " + kStockImage + " bash -c " + single_quoted(kBootstrap) + " job-from-source /results/config.yaml --shard " +
                shard + "/3 --sweep-id s1 --db /tmp/attnsweep/shard-" + shard +
                "-of-3.db --traces /tmp/attnsweep/traces --publish /results\n";
  }
  EXPECT_EQ(outcome.output, expected);
  // Nothing made, nothing uploaded, hf not run.
  expect_hf_untouched();
  EXPECT_TRUE(fs::is_empty(path("tmp")));
  // Uncommitted changes are left out of the archive: said on stderr, the commands unchanged.
  write("checkout/container/build.sh", "# changed\n");
  const Outcome changed = launch(config + " --flavor h200 --shards 3 --results hf://buckets/acme/bench --sweep-id s1 "
                                 "--timeout 1h --from-source --source " + path("checkout") + " --dry-run",
                                 tmp_environment());
  ASSERT_EQ(changed.exit_code, 0) << changed.output;
  EXPECT_EQ(changed.output, "warning: --source: '" + top + "' has uncommitted changes; the jobs build its HEAD (" + sha +
                                ") without them (commit them first to include them)\n" + expected);
}

// The real launch through the fake hf, then shard 0's job command run here as HF Jobs would run it
// (no shell: its argv), /results and /tmp/attnsweep pointed at folders of the test, with no apt
// and the test's build of attnsweep: the script comes out of the uploaded archive and runs the shard.
TEST_F(HfLaunchFromSource, UploadsTheArchiveAndTheJobCommandRunsTheShardFromIt) {
  if (!git_available()) GTEST_SKIP() << "git not on PATH";
  const std::string config = write("sweep.yaml", kSweep);
  const std::string top = make_checkout("checkout");
  const Outcome outcome = launch(config + " --flavor h200 --shards 3 --results hf://buckets/acme/bench --sweep-id s1 "
                                 "--from-source --source " + top, tmp_environment());
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  EXPECT_NE(outcome.output.find("config uploaded to hf://buckets/acme/bench/s1/config.yaml\nsource archive of " +
                                head_of(top) + " uploaded to hf://buckets/acme/bench/s1/attnsweep-src.tar.gz; each job "
                                "builds attnsweep in debian:bookworm-slim\nshard 0/3: job "),
            std::string::npos) << outcome.output;
  const auto recorded = calls();
  ASSERT_EQ(recorded.size(), 6u);  // hardware, config, archive, 3 jobs
  ASSERT_EQ(recorded[2].size(), 4u);
  EXPECT_EQ(recorded[2][3], "hf://buckets/acme/bench/s1/attnsweep-src.tar.gz");
  EXPECT_TRUE(is_private_archive_name(recorded[2][2], path("tmp") + "/attnsweep-src-s1-")) << recorded[2][2];
  EXPECT_TRUE(fs::is_empty(path("tmp"))) << "the local archive is removed";
  const std::string bucket = path("bucket/acme/bench/s1");
  ASSERT_TRUE(fs::exists(bucket + "/attnsweep-src.tar.gz"));

  // Shard K's job as HF Jobs runs it: its -e variables set, then its command (everything after
  // the image, which follows "--"), /results and /tmp/attnsweep pointed at folders of the test.
  const auto job_shell_line = [&](const Argv& job, bool with_job_environment) {
    const auto image = std::find(job.begin(), job.end(), std::string(kStockImage));
    EXPECT_NE(image, job.end());
    EXPECT_EQ(*(image - 1), "--");
    std::string line = "env -u ATTNSWEEP_IMAGE -u ATTNSWEEP_GIT_SHA ";
    for (auto word = job.begin(); with_job_environment && word + 1 < image; ++word) {
      if (*word == "-e") line += single_quoted(*(word + 1)) + " ";
    }
    for (auto word = image + 1; word != job.end(); ++word) {
      std::string text = *word;
      // /tmp/attnsweep first: the test's own folders are under /tmp/attnsweep-launch-*.
      for (const auto& [from, to] : {std::pair<std::string, std::string>{"/tmp/attnsweep", path("job")},
                                     std::pair<std::string, std::string>{"/results", bucket}}) {
        for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
          text.replace(at, from.size(), to);
        }
      }
      line += single_quoted(text) + " ";
    }
    return line;
  };
  const std::string build = fs::path(ATTNSWEEP_BINARY).parent_path().string();
  const std::string switches = "ATTNSWEEP_JOB_SKIP_INSTALL=1 ATTNSWEEP_JOB_BUILD_DIR=" + single_quoted(build) +
                               " ATTNSWEEP_SRC_DIR=" + single_quoted(path("opt")) + " ATTNSWEEP_SRC_ARCHIVE=" +
                               single_quoted(bucket + "/attnsweep-src.tar.gz") + " ";
  const Outcome ran = shell(switches + job_shell_line(recorded[3], true) + "--device cpu");
  ASSERT_EQ(ran.exit_code, 0) << ran.output;
  EXPECT_NE(ran.output.find("[job-from-source] install: skipped (ATTNSWEEP_JOB_SKIP_INSTALL=1)\n"), std::string::npos) << ran.output;
  EXPECT_NE(ran.output.find(" unpack done in "), std::string::npos) << ran.output;
  EXPECT_NE(ran.output.find(" run: attnsweep run " + bucket + "/config.yaml --shard 0/3 --sweep-id s1 "), std::string::npos)
      << ran.output;
  EXPECT_TRUE(fs::exists(path("opt/container/build.sh"))) << "the whole archive is unpacked";
  ASSERT_TRUE(fs::exists(bucket + "/shard-0-of-3.db")) << ran.output;
  // The run records what it ran in (issue 22: it was empty). (Its git_sha is the build's: the job's own
  // build takes ATTNSWEEP_GIT_SHA, which this test skips.)
  const auto image_of = [](const std::string& database) {
    SQLite::Database db(database, SQLite::OPEN_READONLY);
    return db.execAndGet("SELECT container_image FROM runs").getString();
  };
  EXPECT_EQ(image_of(bucket + "/shard-0-of-3.db"), kStockImage);
  // Run by hand without the launch's variables, the script still records no empty image.
  const Outcome by_hand = shell(switches + job_shell_line(recorded[4], false) + "--device cpu");
  ASSERT_EQ(by_hand.exit_code, 0) << by_hand.output;
  EXPECT_EQ(image_of(bucket + "/shard-1-of-3.db"), "unknown (job-from-source.sh)");
}

// A schedule built from source: the nights record the stock image, and every hf option stays before "--".
TEST_F(HfLaunchFromSource, AScheduleFromSourcePassesTheStockImageAsWhatTheNightsRanIn) {
  if (!git_available()) GTEST_SKIP() << "git not on PATH";
  const std::string config = write("sweep.yaml", kSweep);
  const std::string top = make_checkout("checkout");
  const std::string sha = head_of(top);
  const Outcome outcome = launch(config + " --flavor l4x1 --results hf://buckets/acme/bench --schedule @annually --timeout 1h "
                                 "--sweep-id nightly --from-source --source " + top + " --dry-run", tmp_environment());
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  const std::string archive = path("tmp") + "/attnsweep-src-nightly-XXXXXX.tar.gz";
  EXPECT_NE(outcome.output.find("\ngit -C " + top + " archive --format=tar.gz HEAD > " + archive + "\n"), std::string::npos)
      << outcome.output;
  EXPECT_NE(outcome.output.find("\nhf buckets cp " + archive + " hf://buckets/acme/bench/nightly/attnsweep-src.tar.gz\n"),
            std::string::npos) << outcome.output;
  EXPECT_NE(outcome.output.find("\nhf jobs scheduled run @annually --flavor l4x1 --timeout 1h -e ATTNSWEEP_JOB_COMMAND=nightly "
                                "-e ATTNSWEEP_GIT_SHA=" + sha + " -e ATTNSWEEP_IMAGE=" + kStockImage +
                                " -v hf://buckets/acme/bench/nightly:/results -l attnsweep-nightly=nightly -- " + kStockImage +
                                " bash -c " + single_quoted(kBootstrap) + " job-from-source /results/config.yaml --history "
                                "/results --db /tmp/attnsweep-nightly.db --summary /tmp/attnsweep-nightly.md\n"),
            std::string::npos) << outcome.output;
  EXPECT_EQ(outcome.output.find("warning"), std::string::npos) << "l4x1 is one GPU: none idle\n" << outcome.output;
  EXPECT_TRUE(calls().empty()) << log_text();
  EXPECT_TRUE(fs::is_empty(path("tmp")));
}

// Issue 21, finding 15: the archive went to TMPDIR/attnsweep-src-<sweep id>.tar.gz,
// a name another user of a shared /tmp could plant first: a link there made the
// launch overwrite the file it named, a file there was written into and uploaded.
TEST_F(HfLaunchFromSource, TheArchiveIsANewPrivateFileAndNothingPlantedInTmpIsFollowedOrUsed) {
  if (!git_available()) GTEST_SKIP() << "git not on PATH";
  const std::string config = write("sweep.yaml", kSweep);
  const std::string top = make_checkout("checkout");
  const std::string environment = tmp_environment() + "FAKE_HF_CP_MODES='" + path("modes") + "' ";
  write("victim.txt", "victim\n");
  fs::create_symlink(path("victim.txt"), path("tmp/attnsweep-src-s1.tar.gz"));
  write("tmp/attnsweep-src-s2.tar.gz", "planted\n");
  for (const std::string sweep : {"s1", "s2"}) {
    const Outcome outcome = launch(config + " --flavor h200 --shards 1 --results hf://buckets/acme/bench --sweep-id " +
                                   sweep + " --from-source --source " + top, environment);
    ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
    // The upload is of a gzip archive from a new file of its own, readable by its owner only.
    std::ifstream uploaded(path("bucket/acme/bench/" + sweep + "/attnsweep-src.tar.gz"), std::ios::binary);
    std::string magic(2, '\0');
    uploaded.read(magic.data(), 2);
    EXPECT_EQ(magic, "\x1f\x8b") << sweep;
  }
  EXPECT_EQ(file_text(path("victim.txt")), "victim\n") << "a planted link was followed";
  EXPECT_EQ(file_text(path("tmp/attnsweep-src-s2.tar.gz")), "planted\n") << "a planted file was written into";
  std::ifstream modes(path("modes"));
  std::vector<std::string> archives;
  for (std::string mode, source; modes >> mode >> source;) {
    if (source.find("attnsweep-src-") == std::string::npos) continue;  // the config
    EXPECT_EQ(mode, "600") << source;
    archives.push_back(source);
  }
  ASSERT_EQ(archives.size(), 2u);
  EXPECT_TRUE(is_private_archive_name(archives[0], path("tmp") + "/attnsweep-src-s1-")) << archives[0];
  EXPECT_TRUE(is_private_archive_name(archives[1], path("tmp") + "/attnsweep-src-s2-")) << archives[1];
  // Removed afterwards: only what was planted is left.
  std::vector<std::string> left;
  for (const auto& entry : fs::directory_iterator(path("tmp"))) left.push_back(entry.path().filename().string());
  std::sort(left.begin(), left.end());
  EXPECT_EQ(left, (std::vector<std::string>{"attnsweep-src-s1.tar.gz", "attnsweep-src-s2.tar.gz"}));
}

TEST_F(HfLaunchFromSource, ANonGitSourceAnImageAndAStraySourceAreRefused) {
  if (!git_available()) GTEST_SKIP() << "git not on PATH";
  const std::string config = write("sweep.yaml", kSweep);
  const std::string arguments = config + " --flavor h200 --shards 2 --results hf://buckets/acme/bench --sweep-id s1 ";
  const auto refused = [&](const std::string& options, const std::string& message) {
    const Outcome outcome = launch(arguments + options, tmp_environment());
    EXPECT_EQ(outcome.exit_code, 2) << options << "\n" << outcome.output;
    EXPECT_EQ(outcome.output, "error: " + message + "\n") << options;
  };
  refused("--from-source --source " + path("empty"),
          "--source: '" + path("empty") + "' is not a git checkout; --from-source archives the HEAD of attnsweep's "
          "checkout (run in it, or give --source DIR)");
  refused("--from-source --source " + path("no-such-folder") + " --dry-run",
          "--source: '" + path("no-such-folder") + "' is not a git checkout; --from-source archives the HEAD of "
          "attnsweep's checkout (run in it, or give --source DIR)");
  const std::string other = make_checkout("other", /*with_script=*/false);
  refused("--from-source --source " + other, "--source: HEAD of '" + other + "' has no container/job-from-source.sh: "
          "not attnsweep's checkout, or a commit from before --from-source");
  const std::string top = make_checkout("checkout");
  refused("--from-source --source " + top + " --image registry.example/attnsweep:dev",
          "--image and --from-source exclude each other: --image runs an image with attnsweep built in, "
          "--from-source runs the stock debian:bookworm-slim and builds attnsweep in each job");
  refused("--source " + top + " --image " + kImage, "--source: only with --from-source (the checkout whose HEAD the jobs build)");
  // The install and build count against the timeout.
  refused("--from-source --source " + top + " --timeout 12m",
          "shard 0/2 is expected to take 13.0 min (1.2 s on one H200 by the cost model + 3.0 min job start + 10.0 min "
          "install and build), over --timeout 12m (12.0 min); use --timeout 20m");
  EXPECT_EQ(launch(arguments + "--from-source --source " + top + " --timeout 14m --dry-run", tmp_environment()).exit_code, 0);
  for (const auto& call : calls()) EXPECT_EQ(call, kHardware);
  EXPECT_TRUE(fs::is_empty(path("bucket")));
  EXPECT_TRUE(fs::is_empty(path("tmp")));
}

// container/job-from-source.sh on its own: syntax, and the clear line it stops with.
TEST_F(HfLaunchFromSource, TheJobScriptStopsWithAClearLine) {
  const std::string script = std::string(ATTNSWEEP_SOURCE_DIR) + "/container/job-from-source.sh";
  const Outcome syntax = shell("bash -n " + single_quoted(script));
  EXPECT_EQ(syntax.exit_code, 0) << syntax.output;
  const std::string skip = "ATTNSWEEP_JOB_SKIP_INSTALL=1 ATTNSWEEP_SRC_DIR=" + single_quoted(path("opt")) + " ";
  const Outcome no_arguments = shell(skip + "bash " + single_quoted(script));
  EXPECT_EQ(no_arguments.exit_code, 1) << no_arguments.output;
  EXPECT_EQ(no_arguments.output, "[job-from-source] error: no run arguments; usage: job-from-source.sh CONFIG "
                                  "[attnsweep run options...]\n");
  const Outcome no_archive = shell(skip + "ATTNSWEEP_SRC_ARCHIVE=" + single_quoted(path("none.tar.gz")) + " bash " +
                                   single_quoted(script) + " /results/config.yaml");
  EXPECT_EQ(no_archive.exit_code, 1) << no_archive.output;
  EXPECT_NE(no_archive.output.find("[job-from-source] error: no source archive at " + path("none.tar.gz") +
                                   " (attnsweep launch hf --from-source uploads it into the bucket folder the job mounts)\n"),
            std::string::npos) << no_archive.output;
  // It installs with the script container/Dockerfile's build stage runs, and that stage installs nothing else.
  const std::string dockerfile = file_text(std::string(ATTNSWEEP_SOURCE_DIR) + "/container/Dockerfile");
  const std::string build_stage = dockerfile.substr(dockerfile.find(" AS build"),
                                                    dockerfile.find("\nFROM ", dockerfile.find(" AS build")) -
                                                        dockerfile.find(" AS build"));
  EXPECT_NE(build_stage.find("/build_deps.sh"), std::string::npos) << build_stage;
  EXPECT_EQ(build_stage.find("apt-get"), std::string::npos) << build_stage;
  EXPECT_NE(file_text(script).find("bash \"$SOURCE/container/build_deps.sh\""), std::string::npos);
  // An archive of something else.
  fs::create_directories(path("other"));
  write("other/README", "not attnsweep\n");
  ASSERT_EQ(shell("tar -czf " + single_quoted(path("other.tar.gz")) + " -C " + single_quoted(path("other")) + " README").exit_code, 0);
  const Outcome other = shell(skip + "ATTNSWEEP_SRC_ARCHIVE=" + single_quoted(path("other.tar.gz")) + " bash " + single_quoted(script) +
                              " /results/config.yaml");
  EXPECT_EQ(other.exit_code, 1) << other.output;
  EXPECT_NE(other.output.find("[job-from-source] error: " + path("other.tar.gz") + " holds no container/build.sh: not "
                              "an archive of attnsweep's checkout\n"), std::string::npos) << other.output;
}

// Collect: shard databases published into the bucket folder by `run --publish`
// (as the jobs do), synced back by hf and merged.
class HfCollect : public HfLaunch {
 protected:
  // Runs shard K of N on the CPU as a job would, publishing into the bucket's s1 folder.
  void run_shard(const std::string& config, int k, int n, const std::string& extra = "") {
    const std::string name = "shard-" + std::to_string(k) + "-of-" + std::to_string(n) + ".db";
    const Outcome outcome = run("run " + config + " --device cpu --shard " + std::to_string(k) + "/" +
                                    std::to_string(n) + " --sweep-id s1 --db " + path("job" + std::to_string(k)) +
                                    "/" + name + " --traces " + path("job" + std::to_string(k)) + "/traces --publish " +
                                    path("bucket/acme/bench/s1"),
                                extra);
    ASSERT_TRUE(fs::exists(path("bucket/acme/bench/s1/" + name))) << outcome.output;
  }
};

TEST_F(HfCollect, MergesThePublishedShardsAndNamesAMissingOne) {
  const std::string config = write("sweep.yaml", kSweep);
  run_shard(config, 0, 3);
  run_shard(config, 2, 3);
  const std::string out = path("merged.db");
  const Outcome partial = run("collect hf://buckets/acme/bench/s1 " + out, environment());
  EXPECT_EQ(partial.exit_code, 3) << partial.output;
  EXPECT_EQ(partial.output,
            "shard 0/3: merged 4 cases from shard-0-of-3.db (run 1, done)\n"
            "shard 1/3: missing: no shard-1-of-3.db in hf://buckets/acme/bench/s1 (its job failed before publishing, "
            "or has not ended: see its logs)\n"
            "shard 2/3: merged 4 cases from shard-2-of-3.db (run 1, done)\n"
            "run 1 in " + out + ": incomplete, 8 of 12 cases; missing: 1/3; collect again when they arrive\n");
  ASSERT_FALSE(calls().empty());
  const Argv sync = calls().back();
  ASSERT_EQ(sync.size(), 6u);
  EXPECT_EQ((Argv{sync[0], sync[1], sync[2], sync[4], sync[5]}),
            (Argv{"buckets", "sync", "hf://buckets/acme/bench/s1", "--include", "shard-*.db"}));
  EXPECT_FALSE(fs::exists(sync[3])) << "the temporary folder is removed";

  // The late shard arrives: collect again, into the same merged run.
  run_shard(config, 1, 3);
  const Outcome done = run("collect hf://buckets/acme/bench/s1 " + out + " --keep " + path("kept"), environment());
  EXPECT_EQ(done.exit_code, 0) << done.output;
  EXPECT_NE(done.output.find("shard 0/3: already merged from shard-0-of-3.db (run 1, done), nothing new\n"
                             "shard 1/3: merged 4 cases from shard-1-of-3.db (run 1, done)\n"),
            std::string::npos) << done.output;
  EXPECT_NE(done.output.find("run 1 in " + out + ": done, 12 cases\n"), std::string::npos) << done.output;
  EXPECT_EQ(calls().back(), (Argv{"buckets", "sync", "hf://buckets/acme/bench/s1", path("kept")}));
  // --keep: the whole folder stays, traces too.
  EXPECT_TRUE(fs::exists(path("kept/shard-1-of-3.db")));
  EXPECT_EQ(std::distance(fs::directory_iterator(path("kept/traces")), fs::directory_iterator{}), 12);
  SQLite::Database merged(out, SQLite::OPEN_READONLY);
  EXPECT_EQ(merged.execAndGet("SELECT status || ' ' || shard_count || ' ' || sweep_id FROM runs").getString(),
            "done 3 s1");
  EXPECT_EQ(merged.execAndGet("SELECT count(*) FROM cases").getInt(), 12);
  EXPECT_EQ(merged.execAndGet("SELECT group_concat(source_db, ' ') FROM (SELECT source_db FROM merged_shards ORDER BY "
                              "shard_index)").getString(),
            "shard-0-of-3.db shard-1-of-3.db shard-2-of-3.db");
}

TEST_F(HfCollect, NamesAShardWhoseRunWasInterrupted) {
  // Two cases, one shard each; the test_hang one is stopped by SIGTERM and publishes what it has.
  const std::string config = write("hang.yaml", attnsweep::testing::kHangingSweep);
  for (int k = 0; k < 2; ++k) {
    const Outcome outcome = run("run " + config + " --isolate --shard " + std::to_string(k) + "/2 --sweep-id s1 --db " +
                                    path("job/shard-" + std::to_string(k) + "-of-2.db") + " --traces " + path("job/traces") + " --publish " +
                                    path("bucket/acme/bench/s1"),
                                "ATTNSWEEP_TEST_VARIANTS=1 timeout --preserve-status -s TERM 6 ");
    ASSERT_TRUE(fs::exists(path("bucket/acme/bench/s1/shard-" + std::to_string(k) + "-of-2.db"))) << outcome.output;
  }
  const Outcome collected = run("collect hf://buckets/acme/bench/s1 " + path("merged.db"),
                                environment("ATTNSWEEP_TEST_VARIANTS=1 "));
  EXPECT_EQ(collected.exit_code, 3) << collected.output;
  EXPECT_NE(collected.output.find("from shard-0-of-2.db (run 1, done)\n"), std::string::npos) << collected.output;
  EXPECT_NE(collected.output.find("shard 1/2: merged 0 cases from shard-1-of-2.db (run 1, interrupted): 0 of 1 case; "
                                  "its run ended interrupted (see its job's logs)\n"), std::string::npos)
      << collected.output;
  EXPECT_NE(collected.output.find(": incomplete, 1 of 2 cases; not finished: 1/2 (interrupted); collect again when "
                                  "they arrive\n"), std::string::npos) << collected.output;
}

// Issue 21, finding 18: a --keep naming a file failed after syncing, exit 1.
TEST_F(HfCollect, AKeepThatIsAFileIsBadInputRefusedBeforeSyncing) {
  write("kfile", "x\n");
  const Outcome outcome = run("collect hf://buckets/acme/bench/s1 " + path("merged.db") + " --keep " + path("kfile"),
                              environment());
  EXPECT_EQ(outcome.exit_code, 2) << outcome.output;
  EXPECT_EQ(outcome.output, "error: --keep: '" + path("kfile") + "' is a file, not a folder; give a folder (made when "
                            "absent) to keep the synced shard databases and traces in\n");
  EXPECT_TRUE(calls().empty()) << log_text();
  EXPECT_FALSE(fs::exists(path("merged.db")));
  EXPECT_EQ(file_text(path("kfile")), "x\n");
  // A folder named "-k" reaches hf as a path, not an option.
  const Outcome dash = run("collect hf://buckets/acme/bench/s1 merged.db --keep=-k", "cd '" + path("") + "' && " + environment());
  EXPECT_EQ(dash.exit_code, 3) << dash.output;
  ASSERT_EQ(calls().size(), 1u);
  EXPECT_EQ(calls()[0], (Argv{"buckets", "sync", "hf://buckets/acme/bench/s1", path("-k")}));
}

TEST_F(HfCollect, NothingPublishedYetAndAFailingHf) {
  const Outcome empty = run("collect hf://buckets/acme/bench/s1 " + path("merged.db"), environment());
  EXPECT_EQ(empty.exit_code, 3) << empty.output;
  EXPECT_EQ(empty.output, "no shard database (shard-K-of-N.db) in hf://buckets/acme/bench/s1 yet; nothing merged\n");
  EXPECT_FALSE(fs::exists(path("merged.db")));
  const Outcome failing = run("collect hf://buckets/acme/bench/s1 " + path("merged.db"), environment("FAKE_HF_SYNC_FAILS=1 "));
  EXPECT_EQ(failing.exit_code, 1) << failing.output;
  EXPECT_EQ(failing.output, "error: hf buckets sync hf://buckets/acme/bench/s1 failed: Error: 404 Client Error: Bucket "
                            "Not Found\n");
  const Outcome bad = run("collect hf://datasets/acme/bench " + path("merged.db"), environment());
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_EQ(bad.output.rfind("error: collect: 'hf://datasets/acme/bench' is not a bucket", 0), 0u) << bad.output;
}

}  // namespace

// ---- launch hf --schedule: a schedule of nightly runs -------------------------

namespace {

// Two CPU cases of about 0.3 ms each: a night takes a second or two.
const char* const kNightly = R"(name: nightly
device: cpu
variants: [naive, sdpa_math]
dtypes: [fp32]
shapes: {batch: 1, heads: 4, seq_len: 256, head_dim: 32}
measure: {warmup: 2, profiled_forwards: 1, min_samples: 40, max_samples: 40, cuda_graph: false}
)";

// What `hf jobs scheduled run` is given for the nightly in hf://buckets/acme/bench/nightly.
Argv scheduled_argv(const std::string& schedule, const Argv& options) {
  Argv argv = {"jobs", "scheduled", "run", schedule};
  argv.insert(argv.end(), options.begin(), options.end());
  const Argv rest = {"-e", std::string("ATTNSWEEP_IMAGE=") + kImage, "-v", "hf://buckets/acme/bench/nightly:/results", "-l", "attnsweep-nightly=nightly",
                     "--", kImage, "attnsweep", "nightly", "/results/config.yaml", "--history",
                     "/results", "--db", "/tmp/attnsweep-nightly.db", "--summary", "/tmp/attnsweep-nightly.md"};
  argv.insert(argv.end(), rest.begin(), rest.end());
  return argv;
}

}  // namespace

TEST_F(HfLaunch, ADryRunScheduleIsTheExactCommandsAndStartsNothing) {
  const std::string config = write("nightly.yaml", kNightly);
  expect_dry_run_prints(
      config + " --flavor h200 --results hf://buckets/acme/bench --schedule @daily --dry-run --image " + kImage,
      "# schedule nightly: attnsweep nightly of 2 cases, @daily, on h200, --timeout 30m; nights "
      "(nightly-<stamp>.db and .md) in hf://buckets/acme/bench/nightly\n"
      "# each night: 2 cases, expected 3.0 min (0.4 s on one H200 by the cost model + 3.0 min job start)\n"
      "hf buckets cp " + config + " hf://buckets/acme/bench/nightly/config.yaml\n"
      "hf jobs scheduled run @daily --flavor h200 --timeout 30m -e ATTNSWEEP_IMAGE=" + kImage + " -v hf://buckets/acme/bench/nightly:/results "
      "-l attnsweep-nightly=nightly -- " + kImage + " attnsweep nightly /results/config.yaml --history "
      "/results --db /tmp/attnsweep-nightly.db --summary /tmp/attnsweep-nightly.md\n");
}

TEST_F(HfLaunch, AScheduleIsCreatedOnceAndSaysHowToSeeSuspendTriggerAndDeleteIt) {
  const std::string config = write("nightly.yaml", kNightly);
  const Outcome outcome = launch(config + " --flavor h200 --results hf://buckets/acme/bench --schedule '0 3 * * *' "
                                 "--namespace acme-lab --token --timeout 1h --image " + kImage, "HF_TOKEN=hf_secret_value ");
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  EXPECT_EQ(calls(), (std::vector<Argv>{kHardware,
                                        {"buckets", "cp", config, "hf://buckets/acme/bench/nightly/config.yaml"},
                                        scheduled_argv("0 3 * * *", {"--flavor", "h200", "--timeout", "1h",
                                                                     "--namespace", "acme-lab", "-s", "HF_TOKEN"})}));
  const std::string id = "6a0000000000000000000001";
  for (const std::string& line : std::vector<std::string>{"schedule " + id + " created: each run compares with the previous night in "
                                     "hf://buckets/acme/bench/nightly, prints the summary in its log and fails on a regression\n",
                                 "  see:      hf jobs scheduled inspect --namespace acme-lab " + id,
                                 "  nights:   hf jobs ps -a --namespace acme-lab --label attnsweep-nightly=nightly",
                                 "  run now:  hf jobs scheduled trigger --namespace acme-lab " + id + "\n",
                                 "  pause:    hf jobs scheduled suspend --namespace acme-lab " + id,
                                 "(again: hf jobs scheduled resume --namespace acme-lab " + id + ")\n",
                                 "  remove:   hf jobs scheduled delete --namespace acme-lab " + id + "\n"}) {
    EXPECT_NE(outcome.output.find(line), std::string::npos) << line << "\n---\n" << outcome.output;
  }
  EXPECT_EQ(outcome.output.find("hf_secret_value"), std::string::npos);
  EXPECT_EQ(log_text().find("hf_secret_value"), std::string::npos);
  // A failed submission is tried once more, as for jobs.
  const Outcome retried = launch(config + " --flavor h200 --results hf://buckets/acme/other --schedule @weekly --image " +
                                     kImage, "FAKE_HF_FAIL_SUBMISSIONS=2 ");
  ASSERT_EQ(retried.exit_code, 0) << retried.output;
  EXPECT_NE(retried.output.find("warning: the schedule: hf failed (Error: 503 Server Error"), std::string::npos)
      << retried.output;
}

TEST_F(HfLaunch, BadSchedulesShardsAndWaitWithAScheduleAreRefused) {
  const std::string config = write("nightly.yaml", kNightly);
  const std::string base = config + " --flavor h200 --results hf://buckets/acme/bench --image " + kImage + " ";
  for (const auto& [arguments, message] : std::vector<std::pair<std::string, std::string>>{
           {"--schedule @nightly", "error: --schedule: '@nightly' is not a schedule; allowed: @hourly, @daily, "
                                   "@weekly, @monthly, @yearly, @annually, or five cron fields in quotes, e.g. '0 3 * * *'"},
           {"--schedule '0 3 * *'", "error: --schedule: '0 3 * *' is not a schedule"},
           {"--schedule '0;3 * * * *'", "error: --schedule: '0;3 * * * *' is not a schedule"},
           {"--schedule @daily --shards 2", "error: --schedule: each night is one job running attnsweep nightly on "
                                            "the whole config; leave --shards out (or give 1), not 2"},
           {"--schedule @daily --wait", "error: --wait and --schedule exclude each other"},
           {"", "error: --shards N is required: one job per shard of the sweep"}}) {
    SCOPED_TRACE(arguments);
    const Outcome outcome = launch(base + arguments);
    EXPECT_EQ(outcome.exit_code, 2) << outcome.output;
    EXPECT_EQ(outcome.output.rfind(message, 0), 0u) << outcome.output;
    EXPECT_EQ(std::count(outcome.output.begin(), outcome.output.end(), '\n'), 1) << outcome.output;
  }
  EXPECT_TRUE(fs::is_empty(path("bucket")));
  for (const auto& call : calls()) EXPECT_EQ(call, kHardware);
}

// The scheduled job's own command, run here twice with the bucket folder for
// /results: the first night becomes the baseline, the second is compared with
// it, and both nights' databases and summaries land in the folder.
TEST_F(HfLaunch, TheScheduledJobsCommandRunsNightAfterNightIntoTheBucketFolder) {
  const std::string config = write("nightly.yaml", kNightly);
  const Outcome created = launch(config + " --flavor h200 --results hf://buckets/acme/bench --schedule @daily --image " +
                                 kImage);
  ASSERT_EQ(created.exit_code, 0) << created.output;
  const Argv job = calls().back();
  const auto image = std::find(job.begin(), job.end(), kImage);
  ASSERT_NE(image, job.end());
  const std::string bucket = path("bucket/acme/bench/nightly");
  ASSERT_TRUE(fs::exists(bucket + "/config.yaml"));
  std::string command = single_quoted(ATTNSWEEP_BINARY) + " --log-level off";
  for (auto word = image + 2; word != job.end(); ++word) {  // "attnsweep" is the binary under test
    std::string text = *word;
    if (text.rfind("/results", 0) == 0) text = bucket + text.substr(8);
    if (text.rfind("/tmp/attnsweep-nightly", 0) == 0) text = path("job") + text.substr(22);
    command += " " + single_quoted(text);
  }
  command += " --threshold 99";  // CPU times on a shared machine: only the plumbing is tested
  const Outcome first = shell("OMP_NUM_THREADS=1 " + command);
  ASSERT_EQ(first.exit_code, 0) << first.output;
  EXPECT_NE(first.output.find("tonight's run is the first baseline"), std::string::npos) << first.output;
  ::sleep(1);  // the nights' files are named by the second
  const Outcome second = shell("OMP_NUM_THREADS=1 " + command);
  ASSERT_EQ(second.exit_code, 0) << second.output;
  EXPECT_NE(second.output.find("- baseline: `" + bucket + "/nightly-"), std::string::npos) << second.output;
  EXPECT_NE(second.output.find("attnsweep compare: 0 regressions"), std::string::npos) << second.output;
  int databases = 0, summaries = 0;
  for (const auto& entry : fs::directory_iterator(bucket)) {
    const std::string name = entry.path().filename().string();
    databases += name.rfind("nightly-", 0) == 0 && entry.path().extension() == ".db";
    summaries += name.rfind("nightly-", 0) == 0 && entry.path().extension() == ".md";
    EXPECT_EQ(name.find("-wal"), std::string::npos) << "SQLite ran in the bucket folder: " << name;
  }
  EXPECT_EQ(databases, 2);
  EXPECT_EQ(summaries, 2);
}

// ---- issue 22: the launch review against the real hf ------------------------

namespace {

const char* const kImageRequiredLine =
    "error: --image IMAGE is required (no public attnsweep image exists): build one with `make image`, push it to a "
    "registry HF Jobs pulls from (Docker Hub: docker.io/ORG/attnsweep:TAG, or a Space), and pass --image; or use "
    "--from-source to build attnsweep in the job\n";

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

// There was a default image, attnsweep/attnsweep:0.1.0, that exists nowhere: every job failed pulling it.
TEST_F(HfLaunch, WithoutAnImageOrFromSourceItSaysHowToGetOneInOneLine) {
  const std::string config = write("sweep.yaml", kSweep);
  const std::string base = config + " --flavor h200 --results hf://buckets/acme/bench ";
  for (const std::string options : {"--shards 2", "--shards 2 --dry-run", "--schedule @daily",
                                    "--schedule @daily --dry-run", "--shards 2 --wait --token"}) {
    SCOPED_TRACE(options);
    const Outcome outcome = launch(base + options);
    EXPECT_EQ(outcome.exit_code, 2) << outcome.output;
    EXPECT_EQ(outcome.output, kImageRequiredLine);
  }
  // Refused before hf is asked anything: nothing listed, uploaded or started.
  expect_hf_untouched();
  // The two ways out work; the two together stay refused.
  EXPECT_EQ(launch(base + "--shards 2 --dry-run --image " + kImage).exit_code, 0);
  const Outcome both = launch(base + "--shards 2 --dry-run --from-source --image " + kImage);
  EXPECT_EQ(both.exit_code, 2) << both.output;
  EXPECT_EQ(both.output.rfind("error: --image and --from-source exclude each other", 0), 0u) << both.output;
}

TEST_F(HfLaunch, AnnuallyAndYearlyAreSchedulesAsForHf) {
  const std::string config = write("sweep.yaml", kSweep);
  for (const std::string schedule : {"@annually", "@yearly", "@hourly", "@monthly"}) {
    const Outcome outcome = launch(config + " --flavor h200 --results hf://buckets/acme/bench --sweep-id nightly --image " +
                                   kImage + " --schedule " + schedule + " --dry-run");
    ASSERT_EQ(outcome.exit_code, 0) << schedule << "\n" << outcome.output;
    EXPECT_NE(outcome.output.find("\nhf jobs scheduled run " + schedule + " --flavor h200 "), std::string::npos)
        << outcome.output;
  }
  const Outcome refused = launch(config + " --flavor h200 --results hf://buckets/acme/bench --image " + kImage +
                                 " --schedule @biennially --dry-run");
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_EQ(refused.output, "error: --schedule: '@biennially' is not a schedule; allowed: @hourly, @daily, @weekly, "
                            "@monthly, @yearly, @annually, or five cron fields in quotes, e.g. '0 3 * * *' (03:00 every "
                            "day; the service's time zone)\n");
}

// A nightly measures on one GPU: a flavor of several warns that the others idle; l4x1 and l40sx1 are one GPU.
TEST_F(HfLaunch, AScheduleWarnsOfIdleGpusOnlyOnAFlavorOfSeveral) {
  const std::string config = write("sweep.yaml", kSweep);
  const auto schedule_on = [&](const std::string& flavor) {
    return launch(config + " --flavor " + flavor + " --results hf://buckets/acme/bench --sweep-id nightly --image " +
                  kImage + " --schedule @daily --dry-run");
  };
  for (const std::string flavor : {"l4x1", "l40sx1", "h200", "a10g-large", "t4-small", "rtx-pro-6000", "cpu-basic"}) {
    const Outcome one = schedule_on(flavor);
    ASSERT_EQ(one.exit_code, 0) << flavor << "\n" << one.output;
    EXPECT_EQ(one.output.find("warning"), std::string::npos) << flavor << "\n" << one.output;
  }
  const Outcome two = schedule_on("h200x2");
  ASSERT_EQ(two.exit_code, 0) << two.output;
  EXPECT_EQ(two.output.rfind("warning: --flavor h200x2: attnsweep nightly measures on one of its 2 GPUs; the others "
                             "stay idle (and are billed)\n", 0), 0u) << two.output;
  EXPECT_EQ(schedule_on("l40sx8").output.rfind("warning: --flavor l40sx8: attnsweep nightly measures on one of its 8 GPUs", 0),
            0u);
}

// A hanging hf (a failing hf buckets cp took about 100 s) is stopped at its limit and named.
TEST_F(HfLaunch, AnHfCallThatHangsIsStoppedAtItsTimeLimit) {
  const std::string config = write("sweep.yaml", kSweep);
  const std::string arguments = config + " --flavor h200 --shards 2 --results hf://buckets/acme/bench --sweep-id s1 "
                                "--image " + kImage;
  const std::string limit = "ATTNSWEEP_HF_TIMEOUT_SECONDS=1 FAKE_HF_SLEEP=60 ";
  const std::string note = " (ATTNSWEEP_HF_TIMEOUT_SECONDS sets another limit)";

  // The config's upload: stopped, not tried again, nothing started.
  auto start = std::chrono::steady_clock::now();
  const Outcome upload = launch(arguments, limit + "FAKE_HF_SLEEP_ON='buckets cp' ");
  EXPECT_LT(seconds_since(start), 15) << "the 60 s sleep was waited for";
  EXPECT_EQ(upload.exit_code, 1) << upload.output;
  EXPECT_NE(upload.output.find("error: uploading the config to hf://buckets/acme/bench/s1/config.yaml failed: hf timed "
                               "out after 1 s" + note + "; no job was started\n"), std::string::npos) << upload.output;
  EXPECT_EQ(calls(), (std::vector<Argv>{kHardware, {"buckets", "cp", config, "hf://buckets/acme/bench/s1/config.yaml"}}));

  // A submission whose hf hangs in a child process holding its output: the whole group is stopped.
  fs::remove(path("hf.log"));
  start = std::chrono::steady_clock::now();
  const Outcome submit = launch(arguments, limit + "FAKE_HF_SLEEP_ON='jobs run' FAKE_HF_SLEEP_IN_CHILD=1 ");
  EXPECT_LT(seconds_since(start), 15) << "the 60 s sleep was waited for";
  EXPECT_EQ(submit.exit_code, 1) << submit.output;
  EXPECT_NE(submit.output.find("error: shard 0/2: hf jobs run failed: hf timed out after 1 s" + note +
                               " (the job may have started all the same: hf jobs ps -a --label attnsweep-sweep=s1); no "
                               "job was started; not started: 0/2, 1/2\n"), std::string::npos) << submit.output;
  EXPECT_EQ(calls().size(), 3u);  // hardware, the config, shard 0 once

  // hf jobs hardware ignoring SIGTERM: killed after the grace, and the built-in list serves.
  fs::remove(path("hf.log"));
  start = std::chrono::steady_clock::now();
  const Outcome listing = launch(arguments, limit + "FAKE_HF_SLEEP_ON='jobs hardware' FAKE_HF_IGNORE_TERM=1 ");
  EXPECT_LT(seconds_since(start), 15) << "the 60 s sleep was waited for";
  EXPECT_EQ(listing.exit_code, 0) << listing.output;
  EXPECT_EQ(calls().size(), 4u);  // hardware, the config, two jobs

  // hf jobs wait: stopped; each job's stage then comes from hf jobs inspect.
  start = std::chrono::steady_clock::now();
  const Outcome waited = launch(arguments + " --wait", limit + "FAKE_HF_SLEEP_ON='jobs wait' FAKE_HF_STAGES=RUNNING,COMPLETED ");
  EXPECT_LT(seconds_since(start), 15) << "the 60 s sleep was waited for";
  EXPECT_EQ(waited.exit_code, 1) << waited.output;
  EXPECT_NE(waited.output.find("waiting for the jobs to end (hf jobs wait, stopped after 1.0 s: "
                               "ATTNSWEEP_HF_TIMEOUT_SECONDS)\n"), std::string::npos) << waited.output;
  EXPECT_NE(waited.output.find("error: 1 of 2 jobs did not complete: shard 0/2 (job "), std::string::npos) << waited.output;
  EXPECT_NE(waited.output.find(", RUNNING)"), std::string::npos) << waited.output;

  // collect's sync too.
  start = std::chrono::steady_clock::now();
  const Outcome collect = run("collect hf://buckets/acme/bench/s1 " + path("merged.db"),
                              environment(limit + "FAKE_HF_SLEEP_ON='buckets sync' "));
  EXPECT_LT(seconds_since(start), 15) << "the 60 s sleep was waited for";
  EXPECT_EQ(collect.exit_code, 1) << collect.output;
  EXPECT_EQ(collect.output, "error: hf buckets sync hf://buckets/acme/bench/s1 failed: hf timed out after 1 s" + note + "\n");
}

TEST_F(HfLaunch, ABadHfTimeoutSettingIsRefusedBeforeHfRuns) {
  const std::string config = write("sweep.yaml", kSweep);
  // Issue 33, item 15: strtod took "1e-9", "0x2", "+5" and "3.5" (and " 5"): whole seconds in plain digits only.
  for (const std::string value : {"abc", "0", "-5", "1e9", "nan", "10s", "1e-9", "0x2", "+5", "3.5", " 5", "604801"}) {
    SCOPED_TRACE(value);
    for (const std::string dry : {"", " --dry-run"}) {
      const Outcome outcome = launch(config + " --flavor h200 --shards 2 --results hf://buckets/acme/bench --image " +
                                         kImage + dry, "ATTNSWEEP_HF_TIMEOUT_SECONDS='" + value + "' ");
      EXPECT_EQ(outcome.exit_code, 2) << outcome.output;
      EXPECT_EQ(outcome.output, "error: ATTNSWEEP_HF_TIMEOUT_SECONDS: '" + value + "' is not a time limit; expected "
                                "a whole number of seconds from 1 to 604800 (a week), e.g. 120 (or leave it unset for "
                                "each hf call's own limit)\n");
    }
  }
  EXPECT_TRUE(calls().empty()) << log_text();
  EXPECT_EQ(launch(config + " --flavor h200 --shards 2 --results hf://buckets/acme/bench --sweep-id s1 --image " + kImage,
                   "ATTNSWEEP_HF_TIMEOUT_SECONDS=30 ").exit_code, 0);  // 30 s: a loaded CI machine
}

// Issue 33, item 15: ATTNSWEEP_HF_RETRY_SECONDS=abc was a silent 5 s (and "1e2" 100 s): now refused
// like the time limit, by launch (a dry run too) and collect, before hf runs.
TEST_F(HfLaunch, ABadHfRetrySettingIsRefusedBeforeHfRuns) {
  const std::string config = write("sweep.yaml", kSweep);
  for (const std::string value : {"abc", "-1", "601", "1.5", "1e2", "0x2", "+5"}) {
    SCOPED_TRACE(value);
    const std::string expected = "error: ATTNSWEEP_HF_RETRY_SECONDS: '" + value + "' is not a pause; expected a whole "
                                 "number of seconds from 0 to 600, e.g. 30 (or leave it unset for 5 s)\n";
    for (const std::string dry : {"", " --dry-run"}) {
      const Outcome outcome = launch(config + " --flavor h200 --shards 2 --results hf://buckets/acme/bench --image " +
                                         kImage + dry, "ATTNSWEEP_HF_RETRY_SECONDS='" + value + "' ");
      EXPECT_EQ(outcome.exit_code, 2) << outcome.output;
      EXPECT_EQ(outcome.output, expected);
    }
    const Outcome collect = run("collect hf://buckets/acme/bench/s1 " + path("merged.db"),
                                environment("ATTNSWEEP_HF_RETRY_SECONDS='" + value + "' "));
    EXPECT_EQ(collect.exit_code, 2) << collect.output;
    EXPECT_EQ(collect.output, expected);
    EXPECT_FALSE(fs::exists(path("merged.db")));
  }
  EXPECT_TRUE(calls().empty()) << log_text();
  // A failed submission waits what it says: 1 s.
  const Outcome retried = launch(config + " --flavor h200 --shards 1 --results hf://buckets/acme/bench --sweep-id s1 --image " +
                                     kImage, "ATTNSWEEP_HF_RETRY_SECONDS=1 FAKE_HF_FAIL_SUBMISSIONS=1 ");
  EXPECT_EQ(retried.exit_code, 0) << retried.output;
  EXPECT_NE(retried.output.find("; trying again in 1 s"), std::string::npos) << retried.output;
}

// Issue 33, item 15: an --image with quotes and a --schedule of '99 99 99 99 99' were taken (hf
// refused them later, or the service); a line break in --results was printed as one, splitting
// the error. Each is refused in one line naming what is allowed, nothing uploaded.
TEST_F(HfLaunch, ImagesSchedulesAndBucketsAreCheckedAndShownOnOneLine) {
  const std::string config = write("nightly.yaml", kNightly);
  const std::string base = config + " --flavor h200 --results hf://buckets/acme/bench ";
  const std::string image = "error: --image: '";
  const std::string allowed = "; allowed: @hourly, @daily, @weekly, @monthly, @yearly, @annually, or five cron fields in "
                              "quotes, e.g. '0 3 * * *' (03:00 every day; the service's time zone)\n";
  for (const auto& [arguments, message] : std::vector<std::pair<std::string, std::string>>{
           {"--image '\"docker.io/acme/attnsweep:0.1\"' --shards 1", image + "\"docker.io/acme/attnsweep:0.1\"' is not an image name"},
           {"--image \"docker.io/acme/it's:0.1\" --shards 1", image + "docker.io/acme/it's:0.1' is not an image name"},
           {"--image docker.io/ACME/attnsweep --shards 1", image + "docker.io/ACME/attnsweep' is not an image name"},
           {"--image 'docker.io/acme/attnsweep:0.1\n--env=X' --shards 1", image + "docker.io/acme/attnsweep:0.1\\n--env=X' is not an image name"},
           {"--image " + kImage + " --schedule '99 99 99 99 99'",
            "error: --schedule: '99 99 99 99 99' is not a schedule (its minute '99' is not from 0 to 59)" + allowed},
           {"--image " + kImage + " --schedule '0 24 * * *'",
            "error: --schedule: '0 24 * * *' is not a schedule (its hour '24' is not from 0 to 23)" + allowed},
           {"--image " + kImage + " --schedule '0 3 0 * *'",
            "error: --schedule: '0 3 0 * *' is not a schedule (its day of the month '0' is not from 1 to 31)" + allowed},
           {"--image " + kImage + " --schedule '0 3 * 1-13 *'",
            "error: --schedule: '0 3 * 1-13 *' is not a schedule (its month '1-13' is not from 1 to 12, or JAN to DEC)" + allowed},
           {"--image " + kImage + " --schedule '0 3 * * MON-XYZ'",
            "error: --schedule: '0 3 * * MON-XYZ' is not a schedule (its day of the week 'MON-XYZ' is not from 0 to 7, or SUN "
            "to SAT)" + allowed},
           {"--image " + kImage + " --schedule '*/0 * * * *'",
            "error: --schedule: '*/0 * * * *' is not a schedule (its minute step '0' is not from 1 to 59)" + allowed},
           {"--image " + kImage + " --schedule '0 6-2 * * *'",
            "error: --schedule: '0 6-2 * * *' is not a schedule (its hour range '6-2' runs backwards)" + allowed},
           {"--image " + kImage + " --shards 1 --results 'hf://buckets/acme/bench\n/x'",
            "error: --results: 'hf://buckets/acme/bench\\n/x': 'bench\\n' is not allowed; expected "
            "hf://buckets/ORG/NAME[/PREFIX] (letters, digits, '.', '_', '-')\n"}}) {
    SCOPED_TRACE(arguments);
    const bool results = arguments.find("--results") != std::string::npos;
    const Outcome outcome = launch(config + " --flavor h200 " + (results ? "" : "--results hf://buckets/acme/bench ") +
                                   arguments + " --dry-run");
    EXPECT_EQ(outcome.exit_code, 2) << outcome.output;
    EXPECT_EQ(outcome.output.rfind(message, 0), 0u) << outcome.output;
    EXPECT_EQ(std::count(outcome.output.begin(), outcome.output.end(), '\n'), 1) << outcome.output;
  }
  EXPECT_TRUE(fs::is_empty(path("bucket")));
  // What cron and the Hub take stays taken: lists, ranges, steps, names in any case, 7 for Sunday, digests.
  for (const std::string arguments : {"--schedule '*/15 0-6,22 1-31/2 jan-DEC MON-FRI'", "--schedule '0 3 * * 7'",
                                      "--schedule '59 23 31 12 0'"}) {
    EXPECT_EQ(launch(base + "--image " + kImage + " " + arguments + " --dry-run").exit_code, 0) << arguments;
  }
  for (const std::string& name : std::vector<std::string>{"attnsweep", "localhost:5000/acme/a_b.c--d:v1.2-rc",
                                                           "hf.co/spaces/acme/attnsweep",
                                                           "ghcr.io/acme/attnsweep@sha256:" + std::string(64, 'a')}) {
    EXPECT_EQ(launch(base + "--shards 1 --image " + name + " --dry-run").exit_code, 0) << name;
  }
}

// docs/hf-jobs.md named configs/big.yaml, which does not exist: every configs/*.yaml the docs
// a user follows for launches name must be a file of configs/.
TEST(HfJobsDocs, EveryConfigTheyNameExists) {
  const std::regex config_path("configs/[A-Za-z0-9_./-]*\\.yaml");
  int named = 0;
  for (const std::string document : {"docs/hf-jobs.md", "README.md"}) {
    const std::string text = file_text(std::string(ATTNSWEEP_SOURCE_DIR) + "/" + document);
    ASSERT_FALSE(text.empty()) << document;
    for (std::sregex_iterator match(text.begin(), text.end(), config_path), end; match != end; ++match) {
      ++named;
      EXPECT_TRUE(fs::is_regular_file(std::string(ATTNSWEEP_SOURCE_DIR) + "/" + match->str()))
          << document << " names " << match->str() << ", which is not in configs/";
    }
  }
  EXPECT_GE(named, 5);
}
