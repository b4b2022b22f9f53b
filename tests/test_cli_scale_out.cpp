// Scale-out end to end: shards (--shard, a scheduler's environment, --resume
// per shard, plan --shard) and several devices (--gpus: one worker per device,
// one queue, crashes and hangs cost one case). The pool is tested on CPU
// workers (ATTNSWEEP_TEST_VARIANTS=1 with device cpu) and on the GPUs of the
// device machine (skipped where there is no CUDA device).
#include <gtest/gtest.h>

#include <SQLiteCpp/SQLiteCpp.h>
#include <sys/wait.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/cli_run_cut_short.hpp"
#include "tests/support/cli_test.hpp"
#include "tests/support/gpu_checks.hpp"
#include "tests/support/run_attnsweep.hpp"
#include "tests/support/shard_sweeps.hpp"

namespace {

using attnsweep::testing::Outcome;

Outcome run(const std::string& arguments, const std::string& environment = "") {
  return attnsweep::testing::run_attnsweep(arguments, environment);
}

const char* const kSweep = attnsweep::testing::kTwelveCaseSweep;

std::string text(SQLite::Database& db, const std::string& sql) {
  const SQLite::Column value = db.execAndGet(sql);
  return value.isNull() ? "NULL" : value.getString();
}

std::vector<std::string> column(SQLite::Database& db, const std::string& sql) {
  SQLite::Statement query(db, sql);
  std::vector<std::string> values;
  while (query.executeStep()) values.push_back(query.getColumn(0).getString());
  return values;
}

std::set<int> plan_indexes(const std::string& db_path) {
  SQLite::Database db(db_path, SQLite::OPEN_READONLY);
  SQLite::Statement query(db, "SELECT plan_index FROM cases");
  std::set<int> indexes;
  while (query.executeStep()) indexes.insert(query.getColumn(0).getInt());
  return indexes;
}

// The plan indexes `attnsweep plan` lists (its first column).
std::set<int> listed(const std::string& output) {
  std::set<int> indexes;
  std::size_t at = 0;
  for (std::size_t end; (end = output.find('\n', at)) != std::string::npos; at = end + 1) {
    std::string line = output.substr(at, end - at);
    line.erase(0, line.find_first_not_of(' '));  // the index column is right-aligned
    if (!line.empty() && std::isdigit(static_cast<unsigned char>(line[0])) && line.find("cases") == std::string::npos) {
      indexes.insert(std::stoi(line));
    }
  }
  return indexes;
}

class ScaleOut : public attnsweep::testing::CliTest {
 protected:
  ScaleOut() : CliTest("attnsweep-scale-out") {}
};

TEST_F(ScaleOut, ThreeShardsRunEveryCaseOnceEachAsItsOwnRun) {
  const std::string config = write("sweep.yaml", kSweep);
  std::set<int> all;
  for (int k = 0; k < 3; ++k) {
    const std::string db = path("shard" + std::to_string(k) + ".db");
    const Outcome outcome = run("run " + config + " --device cpu --shard " + std::to_string(k) + "/3 --db " + db);
    ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
    EXPECT_NE(outcome.output.find("shard " + std::to_string(k) + "/3 (set by --shard): 4 of the sweep's 12 cases"),
              std::string::npos) << outcome.output;
    SQLite::Database check(db, SQLite::OPEN_READONLY);
    EXPECT_EQ(text(check, "SELECT shard_index || '/' || shard_count || ' ' || shard_source || ' ' || shard_split || ' ' || "
                          "planned_cases || ' of ' || sweep_cases || ' ' || status FROM runs"),
              std::to_string(k) + "/3 --shard cost_lpt_v1 4 of 12 done");
    EXPECT_EQ(text(check, "SELECT length(run_uuid) FROM runs"), "36");
    EXPECT_EQ(text(check, "SELECT count(*) FROM cases WHERE shard_index = " + std::to_string(k)), "4");
    EXPECT_EQ(text(check, "SELECT count(*) FROM run_devices WHERE shard_index = " + std::to_string(k) + " AND device = 'cpu'"), "1");
    // plan --shard lists exactly what the shard ran.
    const std::set<int> ran = plan_indexes(db);
    EXPECT_EQ(listed(run("plan " + config + " --device cpu --shard " + std::to_string(k) + "/3").output), ran);
    for (int index : ran) EXPECT_TRUE(all.insert(index).second) << "case " << index << " ran in two shards";
  }
  EXPECT_EQ(all.size(), 12u);
}

TEST_F(ScaleOut, ASchedulersEnvironmentSetsTheShardAndTheRunSaysWhich) {
  const std::string config = write("sweep.yaml", kSweep);
  const Outcome kubernetes = run("run " + config + " --device cpu --db " + path("k.db"),
                                 "JOB_COMPLETION_INDEX=2 ATTNSWEEP_SHARDS=3 ATTNSWEEP_SWEEP_ID=nightly-7 ");
  ASSERT_EQ(kubernetes.exit_code, 0) << kubernetes.output;
  EXPECT_NE(kubernetes.output.find("shard 2/3 (set by JOB_COMPLETION_INDEX)"), std::string::npos) << kubernetes.output;
  SQLite::Database k(path("k.db"), SQLite::OPEN_READONLY);
  EXPECT_EQ(text(k, "SELECT shard_index || '/' || shard_count || ' ' || shard_source || ' ' || sweep_id FROM runs"),
            "2/3 JOB_COMPLETION_INDEX nightly-7");
  // Slurm arrays may start at any index: --array=4-6 makes task 5 the second shard.
  const Outcome slurm = run("run " + config + " --device cpu --db " + path("s.db"),
                            "SLURM_ARRAY_TASK_ID=5 SLURM_ARRAY_TASK_MIN=4 SLURM_ARRAY_TASK_COUNT=3 SLURM_ARRAY_JOB_ID=991 ");
  ASSERT_EQ(slurm.exit_code, 0) << slurm.output;
  SQLite::Database s(path("s.db"), SQLite::OPEN_READONLY);
  EXPECT_EQ(text(s, "SELECT shard_index || '/' || shard_count || ' ' || shard_source || ' ' || sweep_id FROM runs"),
            "1/3 SLURM_ARRAY_TASK_ID slurm-991");
  EXPECT_EQ(plan_indexes(path("s.db")), listed(run("plan " + config + " --device cpu --shard 1/3").output));
  // --shard wins over the environment.
  const Outcome both = run("plan " + config + " --device cpu --shard 0/3", "JOB_COMPLETION_INDEX=2 ATTNSWEEP_SHARDS=3 ");
  EXPECT_NE(both.output.find("(shard 0/3, set by --shard)"), std::string::npos) << both.output;
}

TEST_F(ScaleOut, ShardMistakesAreOneLineAndExitTwoWithNothingStored) {
  const std::string config = write("sweep.yaml", kSweep);
  const std::string db = path("r.db");
  const auto expect_refused = [&](const std::string& arguments, const std::string& environment, const std::string& message) {
    const Outcome outcome = run(arguments, environment);
    EXPECT_EQ(outcome.exit_code, 2) << arguments << "\n" << outcome.output;
    EXPECT_EQ(outcome.output, "error: " + message + "\n") << arguments;
  };
  expect_refused("run " + config + " --device cpu --db " + db + " --shard 3/3", "",
                 "--shard: K = 3 is not below N = 3 (K counts from 0); expected K/N with 0 <= K < N <= 10000, e.g. 0/4 "
                 "for the first of four shards");
  expect_refused("run " + config + " --device cpu --db " + db + " --shard 1of3", "",
                 "--shard: invalid value '1of3'; expected K/N with 0 <= K < N <= 10000, e.g. 0/4 for the first of four shards");
  expect_refused("run " + config + " --device cpu --db " + db + " --shard 0/13", "",
                 config + ": 13 shards for a plan of 12 cases; use at most 12 shards");
  expect_refused("run " + config + " --device cpu --db " + db, "JOB_COMPLETION_INDEX=1 ",
                 "JOB_COMPLETION_INDEX=1 is set (a Kubernetes indexed job) but not the number of shards: pass --shards "
                 "N or set ATTNSWEEP_SHARDS to the job's completions");
  expect_refused("run " + config + " --device cpu --db " + db + " --shards 3", "",
                 "--shards 3 needs the shard's index: --shard K/N, or JOB_COMPLETION_INDEX (Kubernetes indexed jobs) in "
                 "the environment");
  expect_refused("run " + config + " --device cpu --db " + db, "SLURM_ARRAY_TASK_ID=2 ",
                 "SLURM_ARRAY_TASK_ID=2 is set but SLURM_ARRAY_TASK_COUNT is not; run inside a Slurm job array "
                 "(sbatch --array=0-N) or pass --shard K/N");
  expect_refused("run " + config + " --device cpu --db " + db + " --shard 1/3 --shards 4", "",
                 "--shards 4 disagrees with --shard 1/3; give one of them");
  // A count without an index would run the whole sweep in every pod.
  expect_refused("run " + config + " --device cpu --db " + db, "ATTNSWEEP_SHARDS=3 ",
                 "ATTNSWEEP_SHARDS=3 is set but no shard index: set JOB_COMPLETION_INDEX (a Kubernetes indexed job sets "
                 "it) or pass --shard K/N; unset ATTNSWEEP_SHARDS to run the whole sweep");
  expect_refused("run " + config + " --device cpu --db " + db,
                 "SLURM_ARRAY_TASK_ID=2 SLURM_ARRAY_TASK_COUNT=3 SLURM_ARRAY_TASK_STEP=0 ",
                 "SLURM_ARRAY_TASK_STEP=0: expected a whole number of 1 or more");
  EXPECT_FALSE(std::filesystem::exists(db));
}

// Issue 21, finding 18: a task resubmitted alone (sbatch --array=5: a one-task
// array) ran the whole sweep as shard 0/1, and --shards N under a Slurm array
// was ignored; both silently.
TEST_F(ScaleOut, AResubmittedSlurmTaskAndShardsThatDisagreeWithTheArrayAreRefused) {
  const std::string config = write("sweep.yaml", kSweep);
  const std::string db = path("r.db");
  const std::string resubmitted = "SLURM_ARRAY_TASK_ID=5 SLURM_ARRAY_TASK_MIN=5 SLURM_ARRAY_TASK_COUNT=1 ";
  const std::string message =
      "error: SLURM_ARRAY_TASK_ID=5 is the only task of its Slurm job array (SLURM_ARRAY_TASK_COUNT=1), as when one "
      "task is resubmitted (sbatch --array=5): which shard it stands for is not known; give it with --shard K/N (K "
      "counts from 0 in the original array of N tasks), or --shard 0/1 to run the whole sweep\n";
  for (const std::string verb : {"run", "plan"}) {
    const Outcome outcome = run(verb + " " + config + " --device cpu" + (verb == "run" ? " --db " + db : ""), resubmitted);
    EXPECT_EQ(outcome.exit_code, 2) << verb << "\n" << outcome.output;
    EXPECT_EQ(outcome.output, message) << verb;
  }
  EXPECT_FALSE(std::filesystem::exists(db));
  // Told which shard it stands for, it runs that one.
  const Outcome told = run("plan " + config + " --device cpu --shard 2/3", resubmitted);
  EXPECT_NE(told.output.find("(shard 2/3, set by --shard)"), std::string::npos) << told.output;

  const std::string array = "SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_TASK_COUNT=2 ";
  const Outcome disagree = run("run " + config + " --device cpu --db " + db + " --shards 4", array);
  EXPECT_EQ(disagree.exit_code, 2) << disagree.output;
  EXPECT_EQ(disagree.output, "error: --shards 4 disagrees with SLURM_ARRAY_TASK_COUNT=2 (task 1 of a Slurm job array, "
                             "which sets the shard); drop --shards, or give the shard with --shard K/N\n");
  EXPECT_FALSE(std::filesystem::exists(db));
  const Outcome agree = run("plan " + config + " --device cpu --shards 2", array);
  EXPECT_EQ(agree.exit_code, 0) << agree.output;
  EXPECT_NE(agree.output.find("(shard 1/2, set by SLURM_ARRAY_TASK_ID)"), std::string::npos) << agree.output;
}

// The resume tests: each starts from a run of shard 0/2 of the sweep on the CPU
// into r.db, and resumes it (or tries to) with the same command and options.
class ScaleOutResume : public ScaleOut {
 protected:
  // `attnsweep run` of the sweep on the CPU into r.db, `options` after.
  Outcome run_sweep(const std::string& options, const std::string& environment = "") const {
    return run("run " + config_ + " --device cpu --db " + db_ + " " + options, environment);
  }

  const std::string config_ = write("sweep.yaml", kSweep);
  const std::string db_ = path("r.db");
};

// Issue 21, finding 18: --sweep-id given with --resume was ignored silently.
TEST_F(ScaleOutResume, ASweepIdGivenWithResumeMustBeTheRuns) {
  ASSERT_EQ(run_sweep("--shard 0/2 --sweep-id night-1").exit_code, 0);
  const Outcome other = run_sweep("--shard 0/2 --resume --sweep-id night-2");
  EXPECT_EQ(other.exit_code, 2) << other.output;
  EXPECT_EQ(other.output, "error: --sweep-id night-2: run 1 has sweep id night-1, which --resume keeps; leave "
                          "--sweep-id out (or give the run's)\n");
  // The run's own id, or an id from the environment (a resubmitted Slurm job has a new SLURM_ARRAY_JOB_ID): resumed.
  EXPECT_EQ(run_sweep("--shard 0/2 --resume --sweep-id night-1").exit_code, 0);
  EXPECT_EQ(run_sweep("--shard 0/2 --resume", "SLURM_ARRAY_JOB_ID=77 ").exit_code, 0);
  SQLite::Database check(db_, SQLite::OPEN_READONLY);
  EXPECT_EQ(text(check, "SELECT count(*) || ' ' || sweep_id || ' ' || status FROM runs"), "1 night-1 done");
}

TEST_F(ScaleOutResume, ResumeContinuesAShardOnlyAsTheSameShard) {
  ASSERT_EQ(run_sweep("--shard 0/2").exit_code, 0);
  // Half of the shard is lost (as if the job was stopped): --resume redoes exactly that half.
  attnsweep::testing::cut_run_short(db_, "plan_index >= 6", "interrupted");
  const std::set<int> kept = plan_indexes(db_);
  const Outcome wrong = run_sweep("--resume 1 --shard 1/2");
  EXPECT_EQ(wrong.exit_code, 2);
  EXPECT_EQ(wrong.output, "error: run 1 is shard 0/2, not 1/2; resume it as the same shard (--shard 0/2)\n");
  const Outcome other = run_sweep("--resume --shard 1/2");
  EXPECT_EQ(other.exit_code, 2);
  EXPECT_EQ(other.output, "error: " + db_ + ": no run of shard 1/2 to resume; run without --resume to start one\n");
  const Outcome none = run_sweep("--resume");
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_EQ(none.output, "error: run 1 is shard 0/2, and this run is no shard; resume it as the same shard (--shard 0/2)\n");
  const Outcome resumed = run_sweep("--resume --shard 0/2");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_NE(resumed.output.find(std::to_string(kept.size()) + " of 6 cases already stored"), std::string::npos) << resumed.output;
  EXPECT_EQ(plan_indexes(db_), listed(run("plan " + config_ + " --device cpu --shard 0/2").output));
  SQLite::Database check(db_, SQLite::OPEN_READONLY);
  EXPECT_EQ(text(check, "SELECT status || ' ' || (SELECT count(*) FROM cases) FROM runs"), "done 6");
}

// Several shards' runs in one database: --resume --shard K/N takes the latest
// run of that shard, not the database's latest run.
TEST_F(ScaleOutResume, ResumeOfAShardFindsThatShardsRunAmongOthers) {
  ASSERT_EQ(run_sweep("--shard 0/2").exit_code, 0);
  attnsweep::testing::cut_run_short(db_, "case_id = (SELECT max(case_id) FROM cases)", "interrupted");
  ASSERT_EQ(run_sweep("--shard 1/2").exit_code, 0);
  const Outcome resumed = run_sweep("--resume --shard 0/2");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_NE(resumed.output.find("resuming run 1: 5 of 6 cases already stored"), std::string::npos) << resumed.output;
  SQLite::Database check(db_, SQLite::OPEN_READONLY);
  EXPECT_EQ(text(check, "SELECT group_concat(run_id || ':' || status || ':' || n) FROM (SELECT run_id, status, "
                        "(SELECT count(*) FROM cases c WHERE c.run_id = r.run_id) AS n FROM runs r ORDER BY run_id)"),
            "1:done:6,2:done:6");
  const Outcome none = run("run " + config_ + " --device cpu --db " + path("other.db") + " --shard 1/2");
  ASSERT_EQ(none.exit_code, 0);
  const Outcome absent = run("run " + config_ + " --device cpu --db " + path("other.db") + " --resume --shard 0/2");
  EXPECT_EQ(absent.exit_code, 2);
  EXPECT_EQ(absent.output, "error: " + path("other.db") + ": no run of shard 0/2 to resume; run without --resume to start one\n");
}

// A shard of a --gpus run: the pool finds the shard's cases by their index in the whole plan.
TEST_F(ScaleOut, AShardRunsOnSeveralWorkers) {
  const std::string config = write("cpu.yaml", std::string(kSweep) + "device: cpu\n");
  for (int k = 0; k < 2; ++k) {
    const std::string db = path("g" + std::to_string(k) + ".db");
    const Outcome outcome = run("run " + config + " --shard " + std::to_string(k) + "/2 --gpus 0,1 --db " + db,
                                "ATTNSWEEP_TEST_VARIANTS=1 ");
    ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
    EXPECT_EQ(plan_indexes(db), listed(run("plan " + config + " --shard " + std::to_string(k) + "/2").output));
    SQLite::Database check(db, SQLite::OPEN_READONLY);
    // Each stored case is the plan's case at its index.
    EXPECT_EQ(text(check, "SELECT count(*) FROM cases WHERE variant = CASE plan_index % 3 WHEN 0 THEN 'naive' "
                          "WHEN 1 THEN 'sdpa_math' ELSE 'sdpa_flash' END AND seq_len_q = 16 * (1 + plan_index / 3)"),
              "6");
  }
}

// With a sweep id, a second run of a shard that a merged run already took is
// refused, and the output is left byte-identical.
TEST_F(ScaleOut, MergeRefusesASecondRunOfAMergedShardOfTheSameLaunch) {
  const std::string config = write("sweep.yaml", kSweep);
  std::string shards;
  for (int k = 0; k < 3; ++k) {
    const std::string db = path("s" + std::to_string(k) + ".db");
    ASSERT_EQ(run("run " + config + " --device cpu --sweep-id X --shard " + std::to_string(k) + "/3 --db " + db).exit_code, 0);
    shards += " " + db;
  }
  ASSERT_EQ(run("merge " + path("m.db") + shards).exit_code, 0);
  ASSERT_EQ(run("run " + config + " --device cpu --sweep-id X --shard 0/3 --db " + path("again.db")).exit_code, 0);
  const auto bytes = [](const std::string& file) {
    std::ifstream in(file, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  const std::string before = bytes(path("m.db"));
  const Outcome outcome = run("merge " + path("m.db") + " " + path("again.db"));
  EXPECT_EQ(outcome.exit_code, 2) << outcome.output;
  EXPECT_NE(outcome.output.find("is another run of a shard that run 1 in " + path("m.db") + " took from"),
            std::string::npos) << outcome.output;
  EXPECT_EQ(bytes(path("m.db")), before);
}

// Two CPU workers stand in for two GPUs: the queue, the per-worker storing,
// and a crash or a hang costing one case, the rest of the sweep going on.
TEST_F(ScaleOut, TwoWorkersShareOneQueueAndACrashOrHangCostsOneCase) {
  const std::string config = write("pool.yaml", R"(name: pool
device: cpu
variants: [naive, test_abort, sdpa_flash, test_hang]
dtypes: [fp32]
shapes: {batch: 1, heads: 2, seq_len: [16, 32, 48], head_dim: 8}
measure: {warmup: 1, profiled_forwards: 1, min_samples: 3, max_samples: 3, cuda_graph: false, case_timeout_s: 2}
)");
  const std::string db = path("pool.db");
  const Outcome outcome = run("run " + config + " --gpus 0,1 --db " + db, "ATTNSWEEP_TEST_VARIANTS=1 ");
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  SQLite::Database check(db, SQLite::OPEN_READONLY);
  EXPECT_EQ(text(check, "SELECT gpus || ' ' || planned_cases || ' ' || status FROM runs"), "cpu,cpu 12 done");
  EXPECT_EQ(text(check, "SELECT count(*) || ' ' || count(DISTINCT plan_index) FROM cases"), "12 12");
  EXPECT_EQ(text(check, "SELECT group_concat(variant || ':' || status, ' ') FROM (SELECT DISTINCT variant, status FROM cases "
                        "ORDER BY variant)"),
            "naive:ok sdpa_flash:ok test_abort:crashed test_hang:timeout");
  EXPECT_EQ(text(check, "SELECT error_message FROM cases WHERE variant = 'test_abort' LIMIT 1"),
            "worker killed by signal 6 (Aborted)");
  EXPECT_EQ(text(check, "SELECT count(*) FROM samples JOIN cases USING (case_id) WHERE status = 'ok'"), "18");
  // Both workers were handed cases.
  EXPECT_NE(outcome.output.find("on cpu"), std::string::npos) << outcome.output;
}

TEST_F(ScaleOut, GpusMistakesAreOneLineAndExitTwo) {
  const std::string config = write("sweep.yaml", kSweep);
  const std::string cpu_config = write("cpu.yaml", std::string(kSweep) + "device: cpu\n");
  const std::string db = path("g.db");
  Outcome outcome = run("run " + config + " --device cuda:0 --gpus all --db " + db);
  EXPECT_EQ(outcome.exit_code, 2);
  EXPECT_EQ(outcome.output, "error: --gpus picks the devices itself; give --gpus or --device, not both\n");
  outcome = run("run " + cpu_config + " --gpus 0,1 --db " + db);
  EXPECT_EQ(outcome.exit_code, 2);
  EXPECT_EQ(outcome.output, "error: --gpus runs on CUDA devices, but the device is cpu (from --device or the config); "
                            "drop --gpus, or use --device cuda\n");
  outcome = run("run " + cpu_config + " --gpus 0,0 --db " + db, "ATTNSWEEP_TEST_VARIANTS=1 ");
  EXPECT_EQ(outcome.exit_code, 2);
  EXPECT_EQ(outcome.output, "error: --gpus: GPU 0 is listed twice\n");
  outcome = run("run " + cpu_config + " --gpus one --db " + db, "ATTNSWEEP_TEST_VARIANTS=1 ");
  EXPECT_EQ(outcome.exit_code, 2);
  EXPECT_EQ(outcome.output, "error: --gpus: invalid value 'one'; expected all, or GPU indexes like 0,1\n");
  EXPECT_FALSE(std::filesystem::exists(db));
}

// The image sets ATTNSWEEP_IMAGE to its own name and tag; every run stores it,
// also when a worker process (--isolate) reports the environment.
TEST_F(ScaleOut, ARunRecordsTheContainerImageItRanIn) {
  const std::string config = write("sweep.yaml", kSweep);
  for (const std::string isolate : {"", " --isolate"}) {
    const std::string db = path("image" + std::to_string(isolate.size()) + ".db");
    ASSERT_EQ(run("run " + config + " --device cpu --shard 0/6 --db " + db + isolate,
                  "ATTNSWEEP_IMAGE=ghcr.io/example/attnsweep:0.1.0 ").exit_code, 0);
    SQLite::Database check(db, SQLite::OPEN_READONLY);
    EXPECT_EQ(text(check, "SELECT container_image FROM runs"), "ghcr.io/example/attnsweep:0.1.0") << isolate;
  }
  ASSERT_EQ(run("run " + config + " --device cpu --shard 1/6 --db " + path("none.db")).exit_code, 0);
  SQLite::Database none(path("none.db"), SQLite::OPEN_READONLY);
  EXPECT_EQ(text(none, "SELECT container_image FROM runs"), "NULL");
}

// --publish: the finished run's database as one file and its traces, for a
// bucket mount where SQLite must not run; also when the run is stopped.
TEST_F(ScaleOut, PublishCopiesTheDatabaseAndTracesWhenTheRunEnds) {
  const std::string config = write("sweep.yaml", kSweep);
  const std::string db = path("local.db"), out = path("bucket");
  const Outcome done = run("run " + config + " --device cpu --shard 1/3 --db " + db + " --traces " + path("traces") +
                           " --publish " + out);
  ASSERT_EQ(done.exit_code, 0) << done.output;
  EXPECT_NE(done.output.find("published: " + out + "/local.db and 4 trace files"), std::string::npos) << done.output;
  EXPECT_FALSE(std::filesystem::exists(out + "/local.db-wal"));
  SQLite::Database copy(out + "/local.db", SQLite::OPEN_READONLY);
  SQLite::Database local(db, SQLite::OPEN_READONLY);
  for (const std::string table : {"runs", "cases", "samples", "kernels", "ops", "run_devices"}) {
    EXPECT_EQ(text(copy, "SELECT count(*) FROM " + table), text(local, "SELECT count(*) FROM " + table)) << table;
  }
  EXPECT_EQ(text(copy, "SELECT count(*) FROM cases"), "4");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(out + "/traces"), std::filesystem::directory_iterator{}), 4);
  // The copy points at the copied traces beside it, the local database at its own.
  EXPECT_EQ(text(copy, "SELECT trace_path_base FROM runs"), "database");
  EXPECT_EQ(text(copy, "SELECT count(*) FROM cases WHERE trace_path LIKE 'traces/run1-%.json'"), "4");
  for (const std::string& stored : column(copy, "SELECT trace_path FROM cases")) {
    EXPECT_TRUE(std::filesystem::is_regular_file(out + "/" + stored)) << stored;
  }
  EXPECT_EQ(text(local, "SELECT count(*) FROM cases WHERE trace_path LIKE 'traces/run1-%.json'"), "4");

  // Stopped by SIGTERM while a worker hangs: what was stored is published, the run says interrupted.
  const std::string hang = write("hang.yaml", attnsweep::testing::kHangingSweep);
  const std::string stopped = path("stopped");
  const Outcome interrupted = run("run " + hang + " --isolate --db " + path("hang.db") + " --publish " + stopped,
                                  "ATTNSWEEP_TEST_VARIANTS=1 timeout --preserve-status -s TERM 6 ");
  EXPECT_EQ(interrupted.exit_code, 143) << interrupted.output;
  SQLite::Database partial(stopped + "/hang.db", SQLite::OPEN_READONLY);
  EXPECT_EQ(text(partial, "SELECT status FROM runs"), "interrupted");
  EXPECT_EQ(text(partial, "SELECT group_concat(variant) FROM cases"), "naive");
}

// Issue 33, item 15: the published copies were mode 0600 under umask 0022 (the private
// snapshot's mode, copied with it), so a bucket mount or another user of the folder could
// not read them. They follow the umask as any new file does: 0644 under 0022, 0640 under 0027.
TEST_F(ScaleOut, PublishedCopiesFollowTheUmask) {
  const std::string config = write("sweep.yaml", kSweep);
  for (const auto& [umask, mode] : std::vector<std::pair<std::string, std::filesystem::perms>>{
           {"0022", std::filesystem::perms(0644)}, {"0027", std::filesystem::perms(0640)}}) {
    SCOPED_TRACE(umask);
    const std::string out = path("bucket-" + umask);
    const Outcome done = run("run " + config + " --device cpu --shard 0/3 --db " + path("local-" + umask + ".db") +
                                 " --traces " + path("traces-" + umask) + " --publish " + out,
                             "umask " + umask + "; ");
    ASSERT_EQ(done.exit_code, 0) << done.output;
    int files = 0;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(out)) {
      if (!entry.is_regular_file()) continue;
      ++files;
      EXPECT_EQ(entry.status().permissions() & std::filesystem::perms::all, mode) << entry.path();
    }
    EXPECT_EQ(files, 5) << "the database and its 4 traces";
  }
}

bool has_cuda() { return attnsweep::testing::binary_sees_cuda(); }

TEST_F(ScaleOut, GpuEveryGpuServesCasesAndRecordsItself) {
  if (!has_cuda()) GTEST_SKIP() << "no CUDA device here";
  const std::string config = write("gpus.yaml", R"(name: gpus
variants: [sdpa_flash, sdpa_cudnn, naive]
dtypes: [bf16]
shapes: {batch: [1, 2], heads: 8, seq_len: [256, 512, 1024], head_dim: 64}
measure: {warmup: 2, profiled_forwards: 2, min_samples: 5, max_samples: 20, max_case_seconds: 1}
)");
  const std::string db = path("gpus.db");
  const Outcome outcome = run("run " + config + " --gpus all --db " + db);
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  SQLite::Database check(db, SQLite::OPEN_READONLY);
  const int gpus = check.execAndGet("SELECT count(*) FROM run_devices").getInt();
  ASSERT_GE(gpus, 1);
  EXPECT_EQ(text(check, "SELECT count(*) FROM cases WHERE status = 'ok' AND gpu_uuid LIKE 'GPU-%'"), "18");
  // Every device measured some cases, recorded its UUID and its own ceilings.
  EXPECT_EQ(check.execAndGet("SELECT count(DISTINCT device) FROM cases").getInt(), gpus);
  EXPECT_EQ(check.execAndGet("SELECT count(*) FROM run_devices WHERE gpu_uuid LIKE 'GPU-%' AND ceiling_bf16_tflops > 100 "
                             "AND ceiling_copy_gbps > 100").getInt(), gpus);
  EXPECT_EQ(text(check, "SELECT count(*) FROM cases c JOIN run_devices d ON d.run_id = c.run_id AND d.device = c.device "
                        "AND d.gpu_uuid = c.gpu_uuid"), "18");
  // The results view reads each case's share of its own GPU's ceiling.
  EXPECT_EQ(text(check, "SELECT count(*) FROM results WHERE tflops_share > 0"), "18");
}

// A device-side assert poisons its worker's CUDA context: the worker stores
// the case as an error and retires, and a fresh worker measures the rest.
TEST_F(ScaleOut, GpuADeviceFaultRetiresItsWorkerAndTheRestRuns) {
  if (!has_cuda()) GTEST_SKIP() << "no CUDA device here";
  const std::string config = write("fault.yaml", R"(name: fault
variants: [test_device_fault, sdpa_flash, sdpa_cudnn]
dtypes: [bf16]
shapes: {batch: 1, heads: 2, seq_len: 128, head_dim: 64}
measure: {warmup: 1, profiled_forwards: 2, min_samples: 3, max_samples: 5}
)");
  const std::string db = path("fault.db");
  const Outcome outcome = run("run " + config + " --gpus 0 --db " + db, "ATTNSWEEP_TEST_VARIANTS=1 ");
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  SQLite::Database check(db, SQLite::OPEN_READONLY);
  EXPECT_EQ(text(check, "SELECT group_concat(variant || ':' || status, ' ') FROM (SELECT * FROM cases ORDER BY plan_index)"),
            "test_device_fault:error sdpa_flash:ok sdpa_cudnn:ok");
  EXPECT_NE(text(check, "SELECT error_message FROM cases WHERE variant = 'test_device_fault'").find("device-side assert"),
            std::string::npos);
}

}  // namespace
