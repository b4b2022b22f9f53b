// The attnsweep binary end to end: exit codes, messages, and the database it
// writes (a real SQLite file, read back with SQL).
#include <gtest/gtest.h>

#include <SQLiteCpp/SQLiteCpp.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <vector>

#include "runner/common/sha256.hpp"
#include "runner/storage/store.hpp"
#include "tests/support/cli_run_cut_short.hpp"
#include "tests/support/cli_test.hpp"
#include "tests/support/file_text.hpp"
#include "tests/support/run_attnsweep.hpp"

namespace {

namespace fs = std::filesystem;

using attnsweep::testing::Outcome;

Outcome run(const std::string& arguments, const std::string& environment = "") {
  return attnsweep::testing::run_attnsweep(arguments, environment);
}

using attnsweep::testing::read_file;

const char* const kTinyConfig = R"(name: tiny
variants: [naive, sdpa_math, sdpa_efficient, sdpa_flash]
dtypes: [fp32]
shapes: {batch: 1, heads: 2, seq_len: [16, 32], head_dim: 8}
measure: {warmup: 1, profiled_forwards: 2, min_samples: 3, max_samples: 5, max_case_seconds: 1}
)";

class Cli : public attnsweep::testing::CliTest {
 protected:
  Cli() : CliTest("attnsweep-cli") {}
};

TEST_F(Cli, VersionAndHelpExitZero) {
  const Outcome version = run("--version");
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_NE(version.output.find("attnsweep 0.1.0"), std::string::npos) << version.output;
  for (const std::string command : {"--help", "run --help", "plan --help", "variants --help"}) {
    const Outcome help = run(command);
    EXPECT_EQ(help.exit_code, 0) << command;
    EXPECT_NE(help.output.find("--"), std::string::npos) << command;
  }
  EXPECT_NE(run("--help").output.find("Exit codes: 0 done"), std::string::npos);
  EXPECT_NE(run("run --help").output.find("--traces"), std::string::npos);
}

// Issue 33, item 15: `attnsweep --help` listed exit codes 0-3 and 130/143 but not 4
// (compare's and nightly's INCONCLUSIVE). Every code of docs/cli.md's table is in it.
TEST_F(Cli, HelpNamesEveryExitCodeOfTheDocs) {
  std::ifstream docs(std::string(ATTNSWEEP_SOURCE_DIR) + "/docs/cli.md");
  std::vector<std::string> codes;
  bool in_table = false;
  for (std::string line; std::getline(docs, line);) {
    if (line.rfind("## ", 0) == 0) in_table = line == "## Exit codes";
    if (!in_table || line.rfind("| ", 0) != 0) continue;
    const std::string first = line.substr(2, line.find(" |", 2) - 2);  // "0", "130, 143 (129, ...)"
    if (first.empty() || first.find_first_not_of("0123456789, ()") != std::string::npos) continue;
    const std::regex number("[0-9]+");
    for (std::sregex_iterator code(first.begin(), first.end(), number), end; code != end; ++code) codes.push_back(code->str());
  }
  ASSERT_GE(codes.size(), 7u) << "docs/cli.md's exit code table was not found";
  const std::string help = run("--help").output;
  const std::size_t start = help.find("Exit codes:"), end = help.find("Docs:", start);
  ASSERT_NE(start, std::string::npos) << help;
  const std::string paragraph = help.substr(start, end - start);
  for (const std::string& code : codes) {
    EXPECT_TRUE(std::regex_search(paragraph, std::regex("(^|[^0-9])" + code + "([^0-9]|$)"))) << code << " in\n" << paragraph;
  }
  EXPECT_NE(paragraph.find("4 inconclusive"), std::string::npos) << paragraph;
}

// Issue 33, item 15: docs/schema.md said "now **12**" and described version 13. The
// version it names is the one attnsweep writes, and its history reaches it.
TEST_F(Cli, TheSchemaDocNamesTheSchemaVersionAttnsweepWrites) {
  const std::string schema = read_file(std::string(ATTNSWEEP_SOURCE_DIR) + "/docs/schema.md");
  std::smatch now;
  ASSERT_TRUE(std::regex_search(schema, now, std::regex("version \\(`PRAGMA user_version`, now \\*\\*([0-9]+)\\*\\*\\)")));
  EXPECT_EQ(std::stoi(now[1].str()), attnsweep::storage::kSchemaVersion);
  EXPECT_NE(schema.find("; " + std::to_string(attnsweep::storage::kSchemaVersion) + " (issue"), std::string::npos);
}

TEST_F(Cli, CommandLineMistakesExitTwo) {
  EXPECT_EQ(run("").exit_code, 2);
  EXPECT_EQ(run("frobnicate").exit_code, 2);
  EXPECT_EQ(run("run").exit_code, 2);
  EXPECT_EQ(run("run a.yaml --no-such-flag").exit_code, 2);
  EXPECT_EQ(run("--log-level loud variants").exit_code, 2);
}

TEST_F(Cli, MissingConfigFileExitsTwoWithItsPath) {
  const Outcome outcome = run("run " + path("absent.yaml") + " --db " + path("r.db"));
  EXPECT_EQ(outcome.exit_code, 2);
  EXPECT_NE(outcome.output.find("absent.yaml: config file not found"), std::string::npos) << outcome.output;
  EXPECT_FALSE(fs::exists(path("r.db")));
}

TEST_F(Cli, BadConfigExitsTwoAndCreatesNoDatabase) {
  const std::string config = write("bad.yaml", std::string(kTinyConfig) + "measure_typo: 1\n");
  const Outcome outcome = run("run " + config + " --db " + path("r.db"));
  EXPECT_EQ(outcome.exit_code, 2);
  EXPECT_NE(outcome.output.find("bad.yaml:6:1: measure_typo: unknown key; did you mean 'measure'?"), std::string::npos)
      << outcome.output;
  EXPECT_FALSE(fs::exists(path("r.db")));
}

TEST_F(Cli, BadConfigLeavesAnExistingDatabaseUnchanged) {
  const std::string good = write("good.yaml", kTinyConfig);
  ASSERT_EQ(run("run " + good + " --device cpu --db " + path("r.db")).exit_code, 0);
  const std::string before = attnsweep::sha256_hex(read_file(path("r.db")));
  const std::string bad = write("bad.yaml", std::string(kTinyConfig) + "dtypes: [fp32]\n");
  EXPECT_EQ(run("run " + bad + " --device cpu --db " + path("r.db")).exit_code, 2);
  EXPECT_EQ(run("run " + good + " --device tpu --db " + path("r.db")).exit_code, 2);
  EXPECT_EQ(attnsweep::sha256_hex(read_file(path("r.db"))), before);
}

TEST_F(Cli, UnknownOrAbsentDeviceExitsTwo) {
  const std::string config = write("c.yaml", kTinyConfig);
  const Outcome unknown = run("run " + config + " --device tpu --db " + path("r.db"));
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.output.find("unknown device 'tpu'"), std::string::npos) << unknown.output;
  const Outcome missing = run("run " + config + " --device cuda:64 --db " + path("r.db"));
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.output.find("cuda:64"), std::string::npos) << missing.output;
  EXPECT_FALSE(fs::exists(path("r.db")));
}

TEST_F(Cli, ANonSqliteDatabaseExitsTwoAndIsLeftAlone) {
  const std::string config = write("c.yaml", kTinyConfig);
  const std::string notes = write("notes.db", "my precious notes, not a database, long enough for a header........");
  const Outcome outcome = run("run " + config + " --device cpu --db " + notes);
  EXPECT_EQ(outcome.exit_code, 2);
  EXPECT_NE(outcome.output.find("cannot use as a results database"), std::string::npos) << outcome.output;
  EXPECT_EQ(read_file(notes), "my precious notes, not a database, long enough for a header........");
}

TEST_F(Cli, PlanListsCasesWithTheirCountAndRunsNothing) {
  const Outcome outcome = run(std::string("plan ") + ATTNSWEEP_SOURCE_DIR "/configs/quickstart.yaml --device cpu");
  EXPECT_EQ(outcome.exit_code, 0) << outcome.output;
  EXPECT_NE(outcome.output.find("42 cases, 42 excluded"), std::string::npos) << outcome.output;
  EXPECT_NE(outcome.output.find("unsupported on cpu"), std::string::npos);
  const Outcome blog = run(std::string("plan ") + ATTNSWEEP_SOURCE_DIR "/configs/blog.yaml --device cuda");
  EXPECT_EQ(blog.exit_code, 0) << blog.output;
  EXPECT_NE(blog.output.find("7 cases"), std::string::npos) << blog.output;
  EXPECT_EQ(blog.output.find("unsupported"), std::string::npos) << blog.output;
  EXPECT_EQ(run("plan " + write("bad.yaml", "variants: [naive]\n")).exit_code, 2);
  const Outcome bad_device = run(std::string("plan ") + ATTNSWEEP_SOURCE_DIR "/configs/blog.yaml --device tpu");
  EXPECT_EQ(bad_device.exit_code, 2);
  EXPECT_NE(bad_device.output.find("unknown device 'tpu'; allowed: auto, cpu, cuda, cuda:N"), std::string::npos);
}

// configs/training.yaml plans with its pass column (issue 23).
TEST_F(Cli, PlanOfTheTrainingConfigShowsEachCasesPass) {
  const Outcome outcome = run(std::string("plan ") + ATTNSWEEP_SOURCE_DIR "/configs/training.yaml --device cuda");
  EXPECT_EQ(outcome.exit_code, 0) << outcome.output;
  EXPECT_NE(outcome.output.find("150 cases, 18 excluded"), std::string::npos) << outcome.output;
  EXPECT_NE(outcome.output.find(" pass "), std::string::npos) << outcome.output;
  for (const char* row : {"sdpa_flash          1     32        32       8192        8192       128  fp16   causal  backward",
                          "sdpa_cudnn          2     32         8       4096        4096       128  bf16   causal  forward_backward"}) {
    EXPECT_NE(outcome.output.find(row), std::string::npos) << row << "\n" << outcome.output;
  }
}

// Issue 23: `passes:` adds a pass axis. A forward-only plan shows no pass column;
// with backward passes the plan and the run's summary show the pass, and the
// run stores each pass as its own case.
TEST_F(Cli, PassesOtherThanForwardArePlannedRunAndStoredAsCasesOfTheirOwn) {
  const Outcome forward = run("plan " + write("forward.yaml", kTinyConfig) + " --device cpu");
  EXPECT_EQ(forward.exit_code, 0) << forward.output;
  EXPECT_EQ(forward.output.find("pass"), std::string::npos) << "no pass column for a forward-only plan:\n" << forward.output;

  const std::string config = write("passes.yaml", std::string(kTinyConfig) + "passes: [forward, backward]\n");
  const Outcome plan = run("plan " + config + " --device cpu");
  EXPECT_EQ(plan.exit_code, 0) << plan.output;
  EXPECT_NE(plan.output.find("16 cases"), std::string::npos) << plan.output;
  EXPECT_NE(plan.output.find(" pass "), std::string::npos) << plan.output;
  EXPECT_NE(plan.output.find(" backward "), std::string::npos) << plan.output;

  const Outcome ran = run("run " + config + " --device cpu --db " + path("r.db"));
  ASSERT_EQ(ran.exit_code, 0) << ran.output;
  EXPECT_NE(ran.output.find(" pass "), std::string::npos) << ran.output;
  EXPECT_NE(ran.output.find(" grad_err "), std::string::npos) << ran.output;
  SQLite::Database db(path("r.db"));
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM cases WHERE pass = 'backward'").getInt(), 8);
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM cases WHERE pass = 'forward'").getInt(), 8);
  // Every case that ran has its gradients checked in the backward pass, and none in the forward.
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM results WHERE pass = 'backward' AND status = 'ok' AND "
                          "grad_rel_error_max IS NULL").getInt(), 0);
  EXPECT_GT(db.execAndGet("SELECT count(*) FROM results WHERE pass = 'backward' AND status = 'ok'").getInt(), 0);
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM results WHERE pass = 'forward' AND grad_rel_error_q IS NOT NULL").getInt(), 0);
}

// Issue 24: the energy window reads NVML's counter, which a CPU has not. A CPU
// run with measure.energy_window_ms set runs as without: every energy column
// NULL, no window run, no warning about it. The window asked for is the longest
// allowed (60 s) so that a window run would show in timing_seconds by a factor
// of a hundred, not by a few percent of a loaded CI machine's noise (a 300 ms
// window against a 300 ms bound failed CI at 324 ms).
TEST_F(Cli, ACpuRunLeavesTheEnergyColumnsNull) {
  const std::string config = write("window.yaml", std::string(kTinyConfig) + "passes: [forward, forward_backward]\n");
  std::string text = read_file(config);
  text.replace(text.find("max_case_seconds: 1}"), 20, "max_case_seconds: 1, energy_window_ms: 60000}");
  std::ofstream(config) << text;
  const Outcome ran = run("run " + config + " --device cpu --db " + path("r.db"));
  ASSERT_EQ(ran.exit_code, 0) << ran.output;
  EXPECT_EQ(ran.output.find("energy"), std::string::npos) << ran.output;
  SQLite::Database db(path("r.db"));
  EXPECT_NE(db.execAndGet("SELECT config_yaml FROM runs").getString().find("energy_window_ms: 60000"), std::string::npos);
  EXPECT_GT(db.execAndGet("SELECT count(*) FROM cases WHERE status = 'ok'").getInt(), 0);
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM cases WHERE energy_j IS NOT NULL OR energy_power_w IS NOT NULL OR "
                          "energy_window_s IS NOT NULL OR energy_passes IS NOT NULL").getInt(), 0);
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM results WHERE energy_j IS NOT NULL OR tflop_per_joule IS NOT NULL")
                .getInt(), 0);
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM cases WHERE warnings LIKE '%energy%'").getInt(), 0);
  EXPECT_LT(db.execAndGet("SELECT max(timing_seconds) FROM cases").getDouble(), 30.0);
}

TEST_F(Cli, VariantsListsEveryVariantAndWhereItRuns) {
  const Outcome outcome = run("variants --device cpu");
  EXPECT_EQ(outcome.exit_code, 0);
  for (const std::string name : {"naive ", "naive_inplace", "sdpa_math", "sdpa_efficient", "sdpa_flash", "sdpa_cudnn", "sdpa_auto"}) {
    EXPECT_NE(outcome.output.find(name), std::string::npos) << name;
  }
  EXPECT_NE(outcome.output.find("sdpa_cudnn      no   yes   no"), std::string::npos) << outcome.output;
  EXPECT_EQ(run("variants --device quantum").exit_code, 2);
}

TEST_F(Cli, QueryPrintsTableCsvJsonAndMarkdown) {
  const std::string config = write("tiny.yaml", kTinyConfig);
  ASSERT_EQ(run("run " + config + " --device cpu --db " + path("q.db")).exit_code, 0);
  // flops of 1x2x16x8 causal: 4 * 2 * 8 * 136 attended pairs = 8704 = 8.5 * 1024.
  const std::string query = "query " + path("q.db") +
                            " \"SELECT variant, seq_len_q, kernels_per_forward, flops / 1024.0 AS kflop FROM cases "
                            "WHERE plan_index < 2 ORDER BY plan_index\"";
  const Outcome table = run(query);
  ASSERT_EQ(table.exit_code, 0) << table.output;
  EXPECT_EQ(table.output,
            "variant    seq_len_q  kernels_per_forward  kflop\n"
            "naive      16         NULL                 8.5\n"
            "sdpa_math  16         NULL                 8.5\n");
  EXPECT_EQ(run(query + " --format table").output, table.output);
  const Outcome csv = run(query + " --format csv");
  ASSERT_EQ(csv.exit_code, 0) << csv.output;
  EXPECT_EQ(csv.output, "variant,seq_len_q,kernels_per_forward,kflop\nnaive,16,,8.5\nsdpa_math,16,,8.5\n");
  const Outcome json = run(query + " --format json");
  ASSERT_EQ(json.exit_code, 0) << json.output;
  EXPECT_EQ(json.output.front(), '[');
  EXPECT_NE(json.output.find("\"variant\": \"sdpa_math\""), std::string::npos) << json.output;
  EXPECT_NE(json.output.find("\"seq_len_q\": 16,"), std::string::npos) << json.output;
  EXPECT_NE(json.output.find("\"kernels_per_forward\": null"), std::string::npos) << json.output;
  EXPECT_NE(json.output.find("\"kflop\": 8.5"), std::string::npos) << json.output;
  const Outcome markdown = run(query + " --format markdown");
  ASSERT_EQ(markdown.exit_code, 0) << markdown.output;
  EXPECT_EQ(markdown.output,
            "| variant | seq_len_q | kernels_per_forward | kflop |\n"
            "| --- | --- | --- | --- |\n"
            "| naive | 16 | NULL | 8.5 |\n"
            "| sdpa_math | 16 | NULL | 8.5 |\n");
  const Outcome bad = run(query + " --format xml");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.output.find("xml"), std::string::npos) << bad.output;
}

TEST_F(Cli, RunOnCpuStoresEveryCaseAndPrintsTheSummary) {
  const std::string config = write("tiny.yaml", kTinyConfig);
  const Outcome outcome = run("run " + config + " --device cpu --db " + path("r.db") + " --traces " + path("traces"));
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  EXPECT_NE(outcome.output.find("median_us"), std::string::npos);
  EXPECT_NE(outcome.output.find("run 1 stored in " + path("r.db")), std::string::npos) << outcome.output;
  EXPECT_NE(outcome.output.find("SELECT variant"), std::string::npos);

  SQLite::Database db(path("r.db"), SQLite::OPEN_READONLY);
  EXPECT_EQ(db.execAndGet("SELECT status FROM runs").getString(), "done");
  EXPECT_EQ(db.execAndGet("SELECT device FROM runs").getString(), "cpu");
  EXPECT_EQ(db.execAndGet("SELECT config_yaml FROM runs").getString(), kTinyConfig);
  EXPECT_EQ(db.execAndGet("SELECT config_sha256 FROM runs").getString(), attnsweep::sha256_hex(kTinyConfig));
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM cases").getInt(), 8);
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM cases WHERE status = 'ok'").getInt(), 6);
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM cases WHERE status = 'unsupported' AND variant = 'sdpa_efficient'").getInt(), 2);
  // On the CPU there are no GPU launches: the count columns are NULL and operators live in `ops`.
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM cases WHERE kernels_per_forward IS NOT NULL").getInt(), 0);
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM cases WHERE status = 'ok' AND cpu_ops_per_forward > 0").getInt(), 6);
  EXPECT_EQ(db.execAndGet("SELECT calls_per_forward FROM ops JOIN cases USING (case_id) "
                          "WHERE variant = 'naive' AND seq_len_q = 16 AND name = 'aten::matmul'").getDouble(), 2.0);
  // Every sample is stored, and the stored statistics agree with them.
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM cases c WHERE status = 'ok' AND samples != "
                          "(SELECT count(*) FROM samples s WHERE s.case_id = c.case_id)").getInt(), 0);
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM cases c WHERE status = 'ok' AND cpu_time_us_min != "
                          "(SELECT min(cpu_time_us) FROM samples s WHERE s.case_id = c.case_id)").getInt(), 0);
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM results WHERE status = 'ok' AND time_us_median > 0 AND tflops > 0 "
                          "AND rel_error < 1e-5").getInt(), 6);
  // Where each case's time went: the phases are filled and add up to no more than its wall time.
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM cases WHERE status = 'ok' AND timing_seconds > 0 AND profile_seconds > 0 "
                          "AND accuracy_seconds > 0 AND graph_seconds >= 0 AND setup_seconds + accuracy_seconds + "
                          "warmup_seconds + timing_seconds + graph_seconds + profile_seconds <= wall_seconds").getInt(), 6);
  // At most 5 samples: too few for a 95% interval of the median.
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM cases WHERE median_ci_rel IS NOT NULL").getInt(), 0);
  EXPECT_EQ(db.execAndGet("SELECT case_order FROM runs").getString(), "plan");
  EXPECT_EQ(db.execAndGet("SELECT group_concat(plan_index, ',') FROM (SELECT plan_index FROM cases ORDER BY case_id)").getString(),
            "0,1,2,3,4,5,6,7");
  // One Chrome trace per measured case, its path stored relative to the database's folder
  // (traces/ is beside r.db), so a copy of the folder or a reader elsewhere finds it.
  EXPECT_EQ(db.execAndGet("SELECT trace_path_base FROM runs").getString(), "database");
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM cases WHERE trace_path LIKE 'traces/run1-%.json'").getInt(), 6);
  const std::string trace = db.execAndGet("SELECT trace_path FROM cases WHERE status = 'ok' LIMIT 1").getString();
  EXPECT_TRUE(fs::exists(path(trace))) << trace;
  EXPECT_NE(read_file(path(trace)).find("traceEvents"), std::string::npos);
}

TEST_F(Cli, ShuffledCaseOrderRunsEveryCaseOnceInTheSeedsOrder) {
  std::string yaml = kTinyConfig;
  yaml.replace(yaml.find("max_case_seconds: 1}"), 20, "max_case_seconds: 1, min_samples: 6, max_samples: 8, case_order: shuffled}");
  yaml.replace(yaml.find("min_samples: 3, "), 16, "");
  yaml.replace(yaml.find("max_samples: 5, "), 16, "");
  const std::string config = write("shuffled.yaml", yaml);
  const Outcome outcome = run("run " + config + " --device cpu --db " + path("s.db"));
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output << yaml;
  SQLite::Database db(path("s.db"), SQLite::OPEN_READONLY);
  EXPECT_EQ(db.execAndGet("SELECT case_order FROM runs").getString(), "shuffled");
  EXPECT_EQ(db.execAndGet("SELECT count(DISTINCT plan_index) FROM cases").getInt(), 8);
  const std::string order =
      db.execAndGet("SELECT group_concat(plan_index, ',') FROM (SELECT plan_index FROM cases ORDER BY case_id)").getString();
  EXPECT_NE(order, "0,1,2,3,4,5,6,7");
  // The summary still lists the cases in plan order.
  EXPECT_LT(outcome.output.find("naive "), outcome.output.find("sdpa_math "));
  // 6 to 8 samples: the median's 95% interval is stored.
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM cases WHERE status = 'ok' AND median_ci_rel >= 0").getInt(), 6);
  // A second run of the same config takes the same order.
  ASSERT_EQ(run("run " + config + " --device cpu --db " + path("s.db")).exit_code, 0);
  EXPECT_EQ(db.execAndGet("SELECT group_concat(plan_index, ',') FROM (SELECT plan_index FROM cases WHERE run_id = 2 "
                          "ORDER BY case_id)").getString(), order);
}

TEST_F(Cli, ASecondRunAppendsToTheSameDatabase) {
  const std::string config = write("tiny.yaml", kTinyConfig);
  ASSERT_EQ(run("run " + config + " --device cpu --db " + path("r.db")).exit_code, 0);
  const Outcome second = run("run " + config + " --device cpu --db " + path("r.db"));
  ASSERT_EQ(second.exit_code, 0);
  EXPECT_NE(second.output.find("run 2 stored"), std::string::npos);
  SQLite::Database db(path("r.db"), SQLite::OPEN_READONLY);
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM cases").getInt(), 16);
}

// On a GPU machine a CPU run with TEARDOWN_CUPTI=1 hung (Kineto waits for a CUDA
// call that never comes); attnsweep removes it for CPU runs and says so.
TEST_F(Cli, ACpuRunRemovesTeardownCuptiAndSaysSo) {
  const std::string config = write("tiny.yaml", kTinyConfig);
  const Outcome outcome = run("run " + config + " --device cpu --db " + path("t.db"), "TEARDOWN_CUPTI=1 ");
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  EXPECT_NE(outcome.output.find("TEARDOWN_CUPTI=1 removed for this CPU run"), std::string::npos) << outcome.output;
  SQLite::Database db(path("t.db"), SQLite::OPEN_READONLY);
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM cases WHERE status = 'ok'").getInt(), 6);  // all but efficient
}

TEST_F(Cli, DatabaseWithANewerSchemaExitsTwo) {
  { SQLite::Database db(path("new.db"), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE); db.exec("PRAGMA application_id = 1635021934; PRAGMA user_version = 99"); }
  const Outcome outcome = run("run " + write("c.yaml", kTinyConfig) + " --device cpu --db " + path("new.db"));
  EXPECT_EQ(outcome.exit_code, 2);
  EXPECT_NE(outcome.output.find("newer"), std::string::npos) << outcome.output;
}

// ---- the progress display, --quiet and --verbose (docs/cli.md) -----------------

// Three cases that end ok, unsupported (no CPU kernel) and failed (error: an
// index out of bounds), with ATTNSWEEP_TEST_VARIANTS=1.
const char* const kThreeStatusesConfig = R"(name: three
variants: [naive, sdpa_efficient, test_device_fault]
dtypes: [fp32]
shapes: {batch: 1, heads: 2, seq_len: 16, head_dim: 8}
measure: {warmup: 1, profiled_forwards: 2, min_samples: 3, max_samples: 5, max_case_seconds: 1}
)";

// Two cases that each sample until measure.max_case_seconds (1.5 s): at least
// 3 s of cases, which a 1 s progress interval interrupts at least twice.
const char* const kSlowConfig = R"(name: slow
variants: [naive, sdpa_math]
dtypes: [fp32]
shapes: {batch: 1, heads: 2, seq_len: 16, head_dim: 8}
measure: {warmup: 1, profiled_forwards: 2, min_samples: 1000000, max_samples: 1000000, max_case_seconds: 1.5}
)";

// A shell command line, its stdout (and whatever it redirects there).
Outcome run_shell(const std::string& command) {
  Outcome outcome;
  FILE* pipe = popen(command.c_str(), "r");
  std::array<char, 4096> buffer{};
  for (std::size_t got; (got = fread(buffer.data(), 1, buffer.size(), pipe)) > 0;) outcome.output.append(buffer.data(), got);
  const int status = pclose(pipe);
  outcome.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return outcome;
}

// stdout and stderr apart.
struct Streams {
  int exit_code = -1;
  std::string out, err;
};

Streams run_apart(const std::string& arguments, const std::string& err_path, const std::string& environment = "") {
  const Outcome outcome = run_shell(environment + std::string(ATTNSWEEP_BINARY) + " " + arguments + " 2>" + err_path);
  return {outcome.exit_code, outcome.output, read_file(err_path)};
}

std::vector<std::string> lines_with(const std::string& text, const std::string& part) {
  std::vector<std::string> found;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.find(part) != std::string::npos) found.push_back(line);
  }
  return found;
}

TEST_F(Cli, OffATerminalProgressIsALogLineEveryIntervalAndOneAtTheEnd) {
  const std::string config = write("slow.yaml", kSlowConfig);
  const Outcome outcome = run("run " + config + " --device cpu --db " + path("p.db") + " --progress-interval 1");
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  const std::vector<std::string> progress = lines_with(outcome.output, " info progress: [");
  ASSERT_GE(progress.size(), 3u) << outcome.output;
  // A periodic line shows the case in flight and the estimate (none before a case ends).
  EXPECT_NE(progress.front().find(" elapsed, ETA "), std::string::npos) << progress.front();
  EXPECT_NE(progress.front().find(" | now: "), std::string::npos) << progress.front();
  // They come while the cases run, not all at the end.
  EXPECT_LT(outcome.output.find(progress.front()), outcome.output.find("[2/2] sdpa_math 1x2x16x8 fp32 causal: ok"))
      << outcome.output;
  // The last: every case counted, no estimate, no case in flight; before the table.
  EXPECT_NE(progress.back().find("progress: [2/2 100%] 2 ok, 0 unsupported, 0 failed | "), std::string::npos)
      << progress.back();
  EXPECT_EQ(progress.back().find("ETA"), std::string::npos) << progress.back();
  EXPECT_EQ(progress.back().find("now:"), std::string::npos) << progress.back();
  EXPECT_LT(outcome.output.find(progress.back()), outcome.output.find("median_us"));
  // No live line off a terminal.
  EXPECT_EQ(outcome.output.find("\x1b[2K"), std::string::npos);
}

TEST_F(Cli, TheLastProgressLineCountsOkUnsupportedAndFailedCases) {
  const std::string config = write("three.yaml", kThreeStatusesConfig);
  const Outcome outcome = run("run " + config + " --device cpu --db " + path("p.db") + " --progress-interval 0",
                              "ATTNSWEEP_TEST_VARIANTS=1 ");
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  // --progress-interval 0: only the last line.
  const std::vector<std::string> progress = lines_with(outcome.output, "progress: ");
  ASSERT_EQ(progress.size(), 1u) << outcome.output;
  EXPECT_NE(progress[0].find(" info progress: [3/3 100%] 1 ok, 1 unsupported, 1 failed | "), std::string::npos)
      << progress[0];
  // Each case's lines begin with its position; a failed case's result is a warning, the others info.
  EXPECT_NE(outcome.output.find(" info [1/3] naive 1x2x16x8 fp32 causal\n"), std::string::npos) << outcome.output;
  EXPECT_NE(outcome.output.find(" info [1/3] naive 1x2x16x8 fp32 causal: ok, median "), std::string::npos);
  EXPECT_NE(outcome.output.find(" info [2/3] sdpa_efficient 1x2x16x8 fp32 causal: unsupported ("), std::string::npos)
      << outcome.output;
  EXPECT_NE(outcome.output.find(" warning [3/3] test_device_fault 1x2x16x8 fp32 causal: error ("), std::string::npos)
      << outcome.output;
}

TEST_F(Cli, CasesStoredBeforeAResumeCountAsDoneInTheProgress) {
  const std::string config = write("three.yaml", kThreeStatusesConfig);
  ASSERT_EQ(run("run " + config + " --device cpu --db " + path("p.db"), "ATTNSWEEP_TEST_VARIANTS=1 ").exit_code, 0);
  attnsweep::testing::cut_run_short(path("p.db"), "plan_index = 0", "interrupted");
  const Outcome resumed =
      run("run " + config + " --device cpu --db " + path("p.db") + " --resume", "ATTNSWEEP_TEST_VARIANTS=1 ");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_NE(resumed.output.find(" info [3/3] naive 1x2x16x8 fp32 causal: ok"), std::string::npos) << resumed.output;
  EXPECT_NE(resumed.output.find("progress: [3/3 100%] 1 ok, 1 unsupported, 1 failed | "), std::string::npos)
      << resumed.output;
  EXPECT_EQ(resumed.output.find("on another GPU"), std::string::npos) << resumed.output;  // the same device
}

// A run resumed on another GPU than it started on (a device machine lent anew: issue 37's H200 claims run went on
// on a second H200) goes on, and says once that its environment is the first GPU's while each case keeps its own.
// Here the run "started" on a GPU by its stored UUID; this process has none (the CPU).
TEST_F(Cli, AResumeOnAnotherGpuSaysSo) {
  const std::string config = write("three.yaml", kThreeStatusesConfig);
  ASSERT_EQ(run("run " + config + " --device cpu --db " + path("g.db"), "ATTNSWEEP_TEST_VARIANTS=1 ").exit_code, 0);
  attnsweep::testing::cut_run_short(path("g.db"), "plan_index = 0", "interrupted");
  {
    SQLite::Database db(path("g.db"), SQLite::OPEN_READWRITE);
    ASSERT_EQ(db.exec("UPDATE run_devices SET gpu_uuid = 'GPU-28f77362-073a-3e3b-2e21-626a0e4f1e0b'"), 1);
  }
  const Outcome resumed =
      run("run " + config + " --device cpu --db " + path("g.db") + " --resume", "ATTNSWEEP_TEST_VARIANTS=1 ");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_NE(resumed.output.find(" warning resuming run 1 on another GPU (no GPU UUID here; the run started on "
                                "GPU-28f77362-073a-3e3b-2e21-626a0e4f1e0b): each case keeps its GPU in cases.gpu_uuid; "
                                "the run's environment (run_devices, the report's) is the GPU it started on\n"),
            std::string::npos)
      << resumed.output;
  EXPECT_NE(resumed.output.find("progress: [3/3 100%]"), std::string::npos) << resumed.output;
  // With --isolate the parent leaves CUDA alone: the UUID is the worker's answer, and the warning the same.
  attnsweep::testing::cut_run_short(path("g.db"), "plan_index = 2", "interrupted");
  const Outcome isolated = run("run " + config + " --device cpu --db " + path("g.db") + " --resume --isolate",
                               "ATTNSWEEP_TEST_VARIANTS=1 ");
  ASSERT_EQ(isolated.exit_code, 0) << isolated.output;
  EXPECT_NE(isolated.output.find(" warning resuming run 1 on another GPU (no GPU UUID here; the run started on "
                                 "GPU-28f77362-073a-3e3b-2e21-626a0e4f1e0b)"),
            std::string::npos)
      << isolated.output;
}

TEST_F(Cli, QuietLeavesStderrToWarningsAndStdoutToTheTable) {
  const std::string config = write("tiny.yaml", kTinyConfig);
  for (const std::string& arguments : {"run " + config + " --device cpu --db " + path("q.db") + " --quiet",
                                       "-q run " + config + " --device cpu --db " + path("q.db")}) {
    const Streams quiet = run_apart(arguments, path("err.txt"));
    ASSERT_EQ(quiet.exit_code, 0) << arguments << "\n" << quiet.err;
    EXPECT_EQ(quiet.err, "") << arguments;  // ok and unsupported cases: nothing to warn about
    EXPECT_NE(quiet.out.find("median_us"), std::string::npos) << quiet.out;
    EXPECT_NE(quiet.out.find("sdpa_efficient  1x2x16x8"), std::string::npos) << quiet.out;
    EXPECT_NE(quiet.out.find(" stored in " + path("q.db")), std::string::npos) << quiet.out;
  }
  // A failed case is a warning, which --quiet keeps; nothing at info.
  const Streams failed = run_apart(
      "run " + write("three.yaml", kThreeStatusesConfig) + " --device cpu --db " + path("f.db") + " -q",
      path("err.txt"), "ATTNSWEEP_TEST_VARIANTS=1 ");
  ASSERT_EQ(failed.exit_code, 0) << failed.err;
  EXPECT_NE(failed.err.find(" warning [3/3] test_device_fault 1x2x16x8 fp32 causal: error ("), std::string::npos)
      << failed.err;
  EXPECT_EQ(failed.err.find(" info "), std::string::npos) << failed.err;
  EXPECT_EQ(failed.err.find("progress"), std::string::npos) << failed.err;
  EXPECT_NE(failed.out.find("test_device_fault"), std::string::npos) << failed.out;
}

TEST_F(Cli, VerboseShowsDebugMessagesBeforeOrAfterTheCommand) {
  const std::string config = write("tiny.yaml", kTinyConfig);
  const Outcome plain = run("run " + config + " --device cpu --db " + path("v.db"));
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  EXPECT_EQ(plain.output.find(" debug "), std::string::npos) << plain.output;
  for (const std::string& arguments : {"run " + config + " --device cpu --db " + path("v.db") + " --verbose",
                                       "-v run " + config + " --device cpu --db " + path("v.db")}) {
    const Outcome verbose = run(arguments);
    ASSERT_EQ(verbose.exit_code, 0) << verbose.output;
    EXPECT_NE(verbose.output.find(" debug progress: [1/8] took "), std::string::npos) << verbose.output;
    EXPECT_NE(verbose.output.find(" info [1/8] naive 1x2x16x8 fp32 causal: ok"), std::string::npos);
  }
}

TEST_F(Cli, QuietWithVerboseOrALogLevelIsOneErrorLine) {
  const std::string config = write("tiny.yaml", kTinyConfig);
  for (const std::string& arguments :
       {"-q run " + config + " -v --db " + path("x.db"), "run " + config + " --quiet --verbose --db " + path("x.db"),
        "--log-level debug run " + config + " -q --db " + path("x.db"), "-q --log-level info plan " + config}) {
    const Outcome outcome = run(arguments);
    EXPECT_EQ(outcome.exit_code, 2) << arguments;
    EXPECT_EQ(std::count(outcome.output.begin(), outcome.output.end(), '\n'), 1) << outcome.output;
    EXPECT_EQ(outcome.output.rfind("error: ", 0), 0u) << outcome.output;
    EXPECT_NE(outcome.output.find(": cannot be combined with "), std::string::npos) << outcome.output;
    EXPECT_NE(outcome.output.find(" (both set the log level); see attnsweep "), std::string::npos) << outcome.output;
  }
  EXPECT_FALSE(fs::exists(path("x.db")));
  // The same option before and after the command is one choice.
  EXPECT_EQ(run("-q plan " + config + " -q").exit_code, 0);
  const Outcome bad_interval = run("run " + config + " --progress-interval -1");
  EXPECT_EQ(bad_interval.exit_code, 2);
  EXPECT_NE(bad_interval.output.find("run: --progress-interval: invalid value '-1'; expected seconds, 0 or more"),
            std::string::npos) << bad_interval.output;
}

TEST_F(Cli, RunHelpExplainsTheProgressOptions) {
  const Outcome help = run("run --help");
  ASSERT_EQ(help.exit_code, 0);
  EXPECT_NE(help.output.find("--progress-interval SECONDS=30"), std::string::npos) << help.output;
  EXPECT_NE(help.output.find("live line"), std::string::npos) << help.output;
  EXPECT_NE(help.output.find("-q,--quiet"), std::string::npos) << help.output;
  EXPECT_NE(help.output.find("-v,--verbose"), std::string::npos) << help.output;
  EXPECT_NE(run("--help").output.find("-q,--quiet"), std::string::npos);
  EXPECT_NE(run("plan --help").output.find("-q,--quiet"), std::string::npos);
}

// Under a pseudo-terminal (script from util-linux; stdout and stderr are both
// the terminal): a live line that each log message erases and draws again,
// erased for good before the table.
TEST_F(Cli, OnATerminalProgressIsALiveLineBelowTheLogMessages) {
  if (std::system("command -v script >/dev/null 2>&1") != 0) GTEST_SKIP() << "script (util-linux) is not installed";
  const std::string config = write("tiny.yaml", kTinyConfig);
  const std::string command = std::string(ATTNSWEEP_BINARY) + " run " + config + " --device cpu --db " + path("t.db");
  const Outcome live = run_shell("TERM=xterm script -qfec '" + command + "' /dev/null");
  ASSERT_EQ(live.exit_code, 0) << live.output;
  EXPECT_NE(live.output.find("\r\x1b[2K[0/8 0%] 0 ok, 0 unsupported, 0 failed | 0s elapsed, ETA --"), std::string::npos)
      << live.output;
  // A message erases the line before it is written: never text after the live line on one row.
  EXPECT_EQ(live.output.find("ETA --["), std::string::npos) << live.output;
  EXPECT_NE(live.output.find("ETA --\r\x1b[2K["), std::string::npos) << live.output;
  // After the last erase: the last progress line as a log message, then the table.
  const std::string tail = live.output.substr(live.output.rfind("\x1b[2K"));
  EXPECT_NE(tail.find("progress: [8/8 100%] 6 ok, 2 unsupported, 0 failed | "), std::string::npos) << tail;
  EXPECT_LT(tail.find("progress: [8/8 100%]"), tail.find("median_us")) << tail;

  // TERM=dumb: plain lines, as in a job log.
  const Outcome dumb = run_shell("TERM=dumb script -qfec '" + command + "' /dev/null");
  ASSERT_EQ(dumb.exit_code, 0) << dumb.output;
  EXPECT_EQ(dumb.output.find("\x1b[2K"), std::string::npos) << dumb.output;
  EXPECT_NE(dumb.output.find("progress: [8/8 100%] 6 ok, 2 unsupported, 0 failed | "), std::string::npos);
}

}  // namespace

// Issue 37: `claims: [...]` in a config. plan lists each claim and the case that
// measures it, run stores them (the claims table, the results view's claim
// columns), report --format markdown shows the claims and the backend choice,
// compare shows the claims of both runs, and a claims file with an error is exit 2
// before anything is stored.
TEST_F(Cli, ClaimsArePlannedStoredReportedAndCompared) {
  write("published.yaml", R"(source: {title: "A paper", where: "Table 1"}
measured_on: {gpu: NVIDIA H200, software: {torch: "2.4.0"}}
claims:
  - name: math-16
    case: {variant: sdpa_math, batch: 1, heads: 2, seq_len: 16, head_dim: 8, dtype: fp32, causal: true}
    time_us: 5
  - name: flash-64
    case: {variant: sdpa_flash, batch: 1, heads: 2, seq_len: 64, head_dim: 8, dtype: fp32, causal: true}
    tflops: 100
)");
  const std::string config = write("claims.yaml", std::string(kTinyConfig) + "causal: true\nclaims: [published.yaml]\n");
  const Outcome planned = run("plan " + config + " --device cpu");
  ASSERT_EQ(planned.exit_code, 0) << planned.output;
  EXPECT_NE(planned.output.find("claims: 1 of 2 match a case\n  published.yaml:math-16 (5.0 us on NVIDIA H200): "
                                "case 1 sdpa_math 1x2x16x8 fp32 causal\n"),
            std::string::npos)
      << planned.output;
  EXPECT_NE(planned.output.find("published.yaml:flash-64 (100.0 TFLOP/s on NVIDIA H200): not measured: the "
                                "config's sweep has no case sdpa_flash 1x2x64x8 fp32 causal"),
            std::string::npos)
      << planned.output;

  for (int night = 0; night < 2; ++night) {
    const Outcome ran = run("run " + config + " --device cpu --db " + path("r.db"));
    ASSERT_EQ(ran.exit_code, 0) << ran.output;
    EXPECT_NE(ran.output.find("claim published.yaml:flash-64 is not measured by this run"), std::string::npos) << ran.output;
  }
  SQLite::Database db(path("r.db"));
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM claims WHERE run_id = 1").getInt(), 2);
  EXPECT_EQ(db.execAndGet("SELECT plan_index FROM claims WHERE run_id = 1 AND name = 'math-16'").getInt(), 1);
  const double median = db.execAndGet("SELECT time_us_median FROM results WHERE run_id = 1 AND plan_index = 1").getDouble();
  EXPECT_NEAR(db.execAndGet("SELECT claim_ratio FROM results WHERE run_id = 1 AND plan_index = 1").getDouble(),
              5.0 / median, 1e-9);
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM results WHERE claim_source IS NOT NULL").getInt(), 2);  // one per run
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM choice WHERE run_id = 1").getInt(), 2);  // seq_len 16 and 32

  const Outcome report = run("report " + path("r.db") + " --format markdown --output -");
  ASSERT_EQ(report.exit_code, 0) << report.output;
  EXPECT_NE(report.output.find("## Which backend to pick"), std::string::npos) << report.output;
  EXPECT_NE(report.output.find("## Claims"), std::string::npos) << report.output;
  EXPECT_NE(report.output.find("| published.yaml:math-16 | A paper, Table 1 (NVIDIA H200) | sdpa_math 1x2x16x8 fp32 causal | 5.0 us |"),
            std::string::npos)
      << report.output;
  EXPECT_NE(report.output.find("another GPU: claimed on NVIDIA H200, measured on"), std::string::npos) << report.output;
  const Outcome html = run("report " + path("r.db") + " --output " + path("r.html"));
  ASSERT_EQ(html.exit_code, 0) << html.output;
  const std::string page = read_file(path("r.html"));
  EXPECT_NE(page.find("<section id=\"claims\"><h2>Claims</h2>"), std::string::npos);
  EXPECT_NE(page.find("<td>published.yaml:math-16</td>"), std::string::npos);
  EXPECT_NE(page.find("<section id=\"choice\"><h2>Which backend to pick</h2>"), std::string::npos);

  const Outcome compared = run("compare " + path("r.db") + ":1 " + path("r.db") + ":2");
  EXPECT_NE(compared.output.find("Claims (the candidate's measurement against published figures):"), std::string::npos)
      << compared.output;
  EXPECT_NE(compared.output.find("published.yaml:math-16"), std::string::npos) << compared.output;

  // A claims file with an error: exit 2, one line, the database as it was.
  write("published.yaml", "claims:\n  - name: x\n    case: {variant: naive}\n    tflops: 1\n");
  const auto before = read_file(path("r.db"));
  const Outcome refused = run("run " + config + " --device cpu --db " + path("r.db"));
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_NE(refused.output.find("published.yaml:2:5: claims[0].source.title: every claim needs its source's title"),
            std::string::npos)
      << refused.output;
  EXPECT_EQ(read_file(path("r.db")), before);

  // A claim whose case the plan refuses (kv_heads 3 do not divide 2 heads): refused before the
  // database is opened, so no run row is left 'running' and a new database is not created.
  write("published.yaml", "source: {title: T}\nclaims:\n  - name: x\n    case: {variant: naive, batch: 1, heads: 2, "
                          "kv_heads: 3, seq_len: 16, head_dim: 8, dtype: fp32, causal: true}\n    tflops: 1\n");
  for (const std::string& db : {path("r.db"), path("fresh.db")}) {
    const Outcome unplannable = run("run " + config + " --device cpu --db " + db);
    EXPECT_EQ(unplannable.exit_code, 2) << unplannable.output;
    EXPECT_NE(unplannable.output.find("published.yaml:3:5: claims[0].case"), std::string::npos) << unplannable.output;
    const Outcome in_plan = run("plan " + config + " --device cpu");
    EXPECT_EQ(in_plan.exit_code, 2) << in_plan.output;
    EXPECT_NE(in_plan.output.find("published.yaml:3:5: claims[0].case"), std::string::npos) << in_plan.output;
    EXPECT_EQ(in_plan.output.find("cases ("), std::string::npos) << "the plan's table before the refusal: " << in_plan.output;
  }
  EXPECT_EQ(read_file(path("r.db")), before);
  EXPECT_FALSE(std::filesystem::exists(path("fresh.db")));
}
