// `attnsweep merge` end to end on the CPU: real shard databases written by
// `attnsweep run --shard K/N`, merged, compared with the unsharded run of the
// same config; merging again; every refusal (exit 2, one line, the output left
// as it was); a missing shard (exit 3).
#include <gtest/gtest.h>

#include <SQLiteCpp/SQLiteCpp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "runner/common/sha256.hpp"
#include "runner/storage/store.hpp"
#include "tests/support/file_text.hpp"
#include "tests/support/cli_test.hpp"
#include "tests/support/shard_sweeps.hpp"
#include "tests/support/spawn_attnsweep.hpp"

namespace {

namespace fs = std::filesystem;

using attnsweep::testing::Outcome;

Outcome run(const std::string& arguments, const std::string& environment = "") {
  return attnsweep::testing::run_attnsweep(arguments, environment);
}

std::string file_hash(const std::string& path) { return attnsweep::sha256_hex(attnsweep::testing::read_file(path)); }

const std::string kTinyConfig = attnsweep::testing::six_case_sweep("tiny-merge");

// One text line per row `sql` selects (its one parameter bound to `key`), the
// columns in `left_out` skipped: keys that differ between databases.
std::vector<std::string> rows_of(const std::string& path, const std::string& sql, std::int64_t key = 0,
                                 const std::set<std::string>& left_out = {"case_id", "run_id"}) {
  SQLite::Database db(path, SQLite::OPEN_READONLY);
  SQLite::Statement query(db, sql);
  if (query.getBindParameterCount() > 0) query.bind(1, key);
  std::vector<std::string> rows;
  while (query.executeStep()) {
    std::string line;
    for (int i = 0; i < query.getColumnCount(); ++i) {
      if (left_out.count(query.getColumnName(i))) continue;
      line += std::string(query.getColumnName(i)) + "=" +
              (query.getColumn(i).isNull() ? "NULL" : query.getColumn(i).getString()) + " ";
    }
    rows.push_back(line);
  }
  return rows;
}

std::string single(const std::string& path, const std::string& sql) {
  SQLite::Database db(path, SQLite::OPEN_READONLY);
  return db.execAndGet(sql).getString();
}

// Each case of a run by its key (variant, shape, dtype, causal) with how many
// sample, kernel and operator rows it has, sorted by key.
std::vector<std::string> cases_by_key(const std::string& path, std::int64_t run_id) {
  return rows_of(path,
                 "SELECT variant || ' ' || batch || 'x' || heads || '/' || kv_heads || 'x' || seq_len_q || 'x' || "
                 "seq_len_kv || 'x' || head_dim || ' ' || dtype || ' ' || causal AS case_key, "
                 "(SELECT count(*) FROM samples s WHERE s.case_id = c.case_id) AS samples, "
                 "(SELECT count(*) FROM kernels k WHERE k.case_id = c.case_id) AS kernels, "
                 "(SELECT count(*) FROM ops o WHERE o.case_id = c.case_id) AS ops "
                 "FROM cases c WHERE run_id = ? ORDER BY case_key",
                 run_id);
}

std::string row_counts(const std::string& path) {
  std::string counts;
  for (const char* table : {"runs", "cases", "samples", "kernels", "ops", "run_devices", "merged_shards"}) {
    counts += std::string(table) + "=" + single(path, std::string("SELECT count(*) FROM ") + table) + " ";
  }
  return counts;
}

class CliMerge : public attnsweep::testing::CliTest {
 protected:
  CliMerge() : CliTest("attnsweep-cli-merge") {}
  void SetUp() override { config_ = write("tiny.yaml", kTinyConfig); }

  // Runs shard `shard` ("K/N") of `config` into `db`; returns the db's path.
  std::string run_shard(const std::string& shard, const std::string& db, const std::string& config = "") {
    const Outcome outcome = run("--log-level off run " + (config.empty() ? config_ : config) + " --shard " + shard +
                                " --db " + path(db) + " --device cpu");
    EXPECT_EQ(outcome.exit_code, 0) << outcome.output;
    return path(db);
  }

  std::vector<std::string> run_three_shards() {
    return {run_shard("0/3", "s0.db"), run_shard("1/3", "s1.db"), run_shard("2/3", "s2.db")};
  }

  static std::string joined(const std::vector<std::string>& inputs) {
    std::string text;
    for (const auto& input : inputs) text += " " + input;
    return text;
  }

  // merge exits 2 with one line naming `expected`, and leaves the output as it was (or absent).
  void expect_refused(const std::string& out, const std::vector<std::string>& inputs, const std::string& expected) {
    const bool existed = fs::exists(out);
    const std::string before = existed ? file_hash(out) : "";
    const Outcome outcome = run("merge " + out + joined(inputs));
    EXPECT_EQ(outcome.exit_code, 2) << outcome.output;
    EXPECT_EQ(std::count(outcome.output.begin(), outcome.output.end(), '\n'), 1) << outcome.output;
    EXPECT_EQ(outcome.output.rfind("error: ", 0), 0u) << outcome.output;
    EXPECT_NE(outcome.output.find(expected), std::string::npos) << outcome.output;
    EXPECT_EQ(fs::exists(out), existed);
    if (existed) EXPECT_EQ(file_hash(out), before) << "the output changed";
  }

  std::string config_;
};

TEST_F(CliMerge, MergedShardsHoldExactlyTheCasesOfTheUnshardedRun) {
  const auto shards = run_three_shards();
  ASSERT_EQ(run("--log-level off run " + config_ + " --db " + path("whole.db") + " --device cpu").exit_code, 0);
  const std::string out = path("merged.db");
  const Outcome merged = run("merge " + out + joined(shards));
  ASSERT_EQ(merged.exit_code, 0) << merged.output;
  EXPECT_NE(merged.output.find("shard 1/3: merged 2 cases from " + shards[1] + " (run 1, done)"), std::string::npos)
      << merged.output;
  EXPECT_NE(merged.output.find("run 1 in " + out + ": done, 6 cases"), std::string::npos) << merged.output;

  // The same cases as the unsharded run, by key, with as many rows each (the values differ between runs).
  EXPECT_EQ(cases_by_key(out, 1), cases_by_key(path("whole.db"), 1));
  EXPECT_EQ(single(out, "SELECT status || ' ' || shard_source || ' ' || shard_count || ' ' || planned_cases FROM runs"),
            "done merge 3 6");

  // Each merged case is its shard's, row for row.
  SQLite::Database db(out, SQLite::OPEN_READONLY);
  SQLite::Statement merged_cases(db, "SELECT case_id, plan_index, shard_index FROM cases WHERE run_id = 1");
  int seen = 0;
  while (merged_cases.executeStep()) {
    const std::int64_t case_id = merged_cases.getColumn(0).getInt64();
    const std::string& shard = shards.at(static_cast<std::size_t>(merged_cases.getColumn(2).getInt()));
    const std::int64_t shard_case = std::stoll(
        single(shard, "SELECT case_id FROM cases WHERE plan_index = " + merged_cases.getColumn(1).getString()));
    EXPECT_EQ(rows_of(out, "SELECT * FROM cases WHERE case_id = ?", case_id),
              rows_of(shard, "SELECT * FROM cases WHERE case_id = ?", shard_case));
    for (const std::string table : {"samples", "kernels", "ops"}) {
      const std::string sql = "SELECT * FROM " + table + " WHERE case_id = ? ORDER BY rowid";
      EXPECT_EQ(rows_of(out, sql, case_id), rows_of(shard, sql, shard_case)) << table;
    }
    ++seen;
  }
  EXPECT_EQ(seen, 6);
}

// Issue 37: every shard stores the config's claims (matched by the whole plan's
// plan_index); the merged run holds each once, matched to its merged case.
TEST_F(CliMerge, TheMergedRunHoldsTheClaimsOnceMatchedToItsCases) {
  write("published.yaml", "source: {title: T}\nclaims:\n  - name: last\n    case: {variant: sdpa_math, batch: 1, "
                                   "heads: 2, seq_len: 32, head_dim: 8, dtype: fp32, causal: true}\n    time_us: 10\n"
                                   "  - name: absent\n    case: {variant: fa3, batch: 1, heads: 2, seq_len: 32, "
                                   "head_dim: 8, dtype: fp32, causal: true}\n    time_us: 10\n");
  const std::string config = write("claimed.yaml", kTinyConfig + "claims: [published.yaml]\n");
  const std::vector<std::string> shards = {run_shard("0/3", "c0.db", config), run_shard("1/3", "c1.db", config),
                                           run_shard("2/3", "c2.db", config)};
  for (const auto& shard : shards) EXPECT_EQ(single(shard, "SELECT count(*) FROM claims"), "2");
  const std::string out = path("claimed-merged.db");
  ASSERT_EQ(run("merge " + out + joined(shards)).exit_code, 0);
  EXPECT_EQ(single(out, "SELECT count(*) FROM claims"), "2");
  EXPECT_EQ(single(out, "SELECT group_concat(name || ':' || ifnull(status, '-'), ',') FROM "
                        "(SELECT * FROM claim_results ORDER BY claim_id)"),
            "last:ok,absent:-");
  EXPECT_EQ(single(out, "SELECT count(*) FROM results WHERE claim_ratio IS NOT NULL"), "1");
}

TEST_F(CliMerge, MergingAgainAddsNothing) {
  const auto shards = run_three_shards();
  const std::string out = path("merged.db");
  ASSERT_EQ(run("merge " + out + joined(shards)).exit_code, 0);
  const std::string counts = row_counts(out), hash = file_hash(out);
  const Outcome again = run("merge " + out + joined(shards));
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("shard 0/3: already merged from " + shards[0] + " (run 1, done), nothing new"),
            std::string::npos) << again.output;
  EXPECT_NE(again.output.find("run 1 in " + out + ": done, 6 cases"), std::string::npos) << again.output;
  EXPECT_EQ(row_counts(out), counts);
  EXPECT_EQ(file_hash(out), hash);
}

TEST_F(CliMerge, AMissingShardLeavesTheRunIncompleteAndNamesIt) {
  const auto shards = run_three_shards();
  const std::string out = path("merged.db");
  const Outcome partial = run("merge " + out + " " + shards[0] + " " + shards[2]);
  EXPECT_EQ(partial.exit_code, 3) << partial.output;
  EXPECT_NE(partial.output.find("shard 1/3: missing"), std::string::npos) << partial.output;
  EXPECT_NE(partial.output.find("run 1 in " + out + ": incomplete: shard 1/3 missing; merge it when it arrives"),
            std::string::npos) << partial.output;
  EXPECT_EQ(single(out, "SELECT status FROM runs"), "incomplete");
  EXPECT_EQ(single(out, "SELECT count(*) FROM cases"), "4");

  const Outcome rest = run("merge " + out + " " + shards[1]);
  EXPECT_EQ(rest.exit_code, 0) << rest.output;
  EXPECT_NE(rest.output.find("shard 0/3: merged earlier from " + shards[0]), std::string::npos) << rest.output;
  EXPECT_EQ(single(out, "SELECT status FROM runs"), "done");
  EXPECT_EQ(single(out, "SELECT count(*) FROM cases"), "6");
}

TEST_F(CliMerge, AnOutputHoldingAnotherRunKeepsItUntouched) {
  const std::string out = path("results.db");
  ASSERT_EQ(run("--log-level off run " + config_ + " --db " + out + " --device cpu").exit_code, 0);
  const auto dump = [&] {
    auto rows = rows_of(out, "SELECT * FROM runs WHERE run_id = 1", 0, {});
    for (const char* sql : {"SELECT * FROM cases WHERE run_id = 1 ORDER BY case_id",
                            "SELECT s.* FROM samples s JOIN cases USING (case_id) WHERE run_id = 1 ORDER BY s.rowid",
                            "SELECT k.* FROM kernels k JOIN cases USING (case_id) WHERE run_id = 1 ORDER BY k.rowid",
                            "SELECT o.* FROM ops o JOIN cases USING (case_id) WHERE run_id = 1 ORDER BY o.rowid",
                            "SELECT * FROM run_devices WHERE run_id = 1"}) {
      for (const auto& row : rows_of(out, sql, 0, {})) rows.push_back(row);
    }
    return rows;
  };
  const auto before = dump();
  const Outcome merged = run("merge " + out + joined(run_three_shards()));
  EXPECT_EQ(merged.exit_code, 0) << merged.output;
  EXPECT_NE(merged.output.find("run 2 in " + out + ": done, 6 cases"), std::string::npos) << merged.output;
  EXPECT_EQ(dump(), before);
  EXPECT_EQ(cases_by_key(out, 2), cases_by_key(out, 1));
}

TEST_F(CliMerge, RefusesShardsOfAnotherConfig) {
  const std::string other = write("other.yaml", std::string(kTinyConfig) + "seed: 3\n");
  expect_refused(path("merged.db"), {run_shard("0/3", "s0.db"), run_shard("1/3", "other.db", other)},
                 "other.db: run 1 (shard 1/3) is of another sweep than " + path("s0.db") + " run 1 (shard 0/3): another config");
}

// The probe of issue 21 (finding 12): a shard run with a test knob merged with
// a clean one made a run that compare called "no difference" from a clean one.
TEST_F(CliMerge, RefusesAShardRunUnderAnotherResultChangingEnvironment) {
  const std::string s0 = run_shard("0/3", "s0.db");
  const Outcome slow = run("--log-level off run " + config_ + " --shard 1/3 --db " + path("slow.db") + " --device cpu",
                           "ATTNSWEEP_TEST_SLOWDOWN=naive OMP_NUM_THREADS=1 ");
  ASSERT_EQ(slow.exit_code, 0) << slow.output;
  expect_refused(path("merged.db"), {s0, path("slow.db"), run_shard("2/3", "s2.db")},
                 "slow.db: run 1 (shard 1/3) ran in another environment than " + s0 + " run 1 (shard 0/3): "
                 "env_vars ATTNSWEEP_TEST_SLOWDOWN 'naive', not unset; env_vars OMP_NUM_THREADS '1', not unset; the "
                 "shards of one merged run must measure in one environment");
}

TEST_F(CliMerge, RefusesAnInputOfAnotherSchemaVersion) {
  const std::string old = path("v5.db");
  fs::copy_file(ATTNSWEEP_SOURCE_DIR "/tests/data/schema_v5.db", old);
  const std::string hash = file_hash(old);
  expect_refused(path("merged.db"), {run_shard("0/3", "s0.db"), old},
                 "v5.db: database schema version 5, but merge takes version " +
                     std::to_string(attnsweep::storage::kSchemaVersion) + " only");
  EXPECT_EQ(file_hash(old), hash);
}

// Issue 33, item 9. A refused merge into an output of an older schema left it
// migrated (schema 9 -> 13, another SHA; the older attnsweep then refused it),
// where exit 2 promises nothing changed. Here the output, a saved version-9
// database, holds shard 0/1 of the very sweep given as input (that run,
// migrated into a database of this version): refused, the output byte-identical.
TEST_F(CliMerge, ARefusedMergeLeavesAnOutputOfAnOlderSchemaUnmigrated) {
  const std::string old = path("v9.db"), input = path("in.db");
  fs::copy_file(ATTNSWEEP_SOURCE_DIR "/tests/data/schema_v9.db", old);
  fs::copy_file(ATTNSWEEP_SOURCE_DIR "/tests/data/schema_v9.db", input);
  { const attnsweep::storage::Store migrated(input, attnsweep::storage::Store::Open::create_if_absent); }
  expect_refused(old, {input}, "v9.db: holds run 1, shard 0/1 of this very sweep, so it looks like an input");
  EXPECT_EQ(single(old, "PRAGMA user_version"), "9");
}

// A merge that writes into an older output migrates it (in the same step).
TEST_F(CliMerge, AMergeIntoAnOutputOfAnOlderSchemaMigratesItAndKeepsItsRun) {
  const std::string old = path("v9.db");
  fs::copy_file(ATTNSWEEP_SOURCE_DIR "/tests/data/schema_v9.db", old);
  const auto shards = run_three_shards();
  const Outcome merged = run("merge " + old + joined(shards));
  ASSERT_EQ(merged.exit_code, 0) << merged.output;
  EXPECT_EQ(single(old, "PRAGMA user_version"), std::to_string(attnsweep::storage::kSchemaVersion));
  EXPECT_EQ(single(old, "SELECT group_concat(name || ':' || status, ' ') FROM runs ORDER BY run_id"),
            "saved-v7:done tiny-merge:done");
  EXPECT_EQ(single(old, "SELECT count(*) FROM cases"), "8");  // 2 of the saved run, 6 merged
}

// Issue 33, item 15. A SIGTERM during a merge into a new output left the
// private file it was made in (.OUT.new-XXXXXX, with its -wal and -shm)
// beside OUT. A shard with half a million samples makes the merge last.
TEST_F(CliMerge, ASignalledMergeLeavesNoFileBesideTheOutput) {
  const std::string shard = run_shard("0/1", "big.db");
  {
    SQLite::Database db(shard, SQLite::OPEN_READWRITE);
    db.exec("WITH RECURSIVE n(i) AS (SELECT 1000 UNION ALL SELECT i + 1 FROM n WHERE i < 500000) "
            "INSERT INTO samples (case_id, sample_index, gpu_time_us, cpu_time_us) "
            "SELECT (SELECT min(case_id) FROM cases), i, NULL, 1.0 FROM n");
  }
  const std::string out = path("merged") + "/out.db";
  fs::create_directories(path("merged"));
  for (const int signal : {SIGTERM, SIGINT, SIGHUP}) {
    const pid_t pid = attnsweep::testing::spawn_attnsweep({"merge", out, shard}, path("merge.log"));
    // The private file, once the merge writes into it: after the shard's check
    // (every sample read), seconds on a loaded machine; waited for up to 60 s
    // or until the merge ends by itself.
    bool seen = false, ended = false;
    int status = 0;
    for (int i = 0; i < 30000 && !seen && !ended; ++i) {
      for (const auto& entry : fs::directory_iterator(path("merged"))) {
        seen = seen || entry.path().filename().string().rfind(".out.db.new-", 0) == 0;
      }
      if (!seen) {
        ended = ::waitpid(pid, &status, WNOHANG) == pid;
        ::usleep(2000);
      }
    }
    ASSERT_TRUE(seen) << "the merge ended before it was signalled (exit status " << status << ")";
    ::kill(pid, signal);
    EXPECT_EQ(attnsweep::testing::wait_exit(pid), 128 + signal);
    std::vector<std::string> left;
    for (const auto& entry : fs::directory_iterator(path("merged"))) left.push_back(entry.path().filename().string());
    EXPECT_TRUE(left.empty()) << "left beside the output: " << joined(left);
  }
}

TEST_F(CliMerge, RefusesOverlappingShards) {
  expect_refused(path("merged.db"), {run_shard("1/3", "s1.db"), run_shard("1/3", "again.db")},
                 "again.db: run 1 (shard 1/3) and " + path("s1.db") + " run 1 (shard 1/3) are two runs of one shard");
}

TEST_F(CliMerge, RefusesAnInconsistentShardCount) {
  expect_refused(path("merged.db"), {run_shard("0/3", "s0.db"), run_shard("1/2", "half.db")},
                 "half.db: run 1 (shard 1/2) is of another sweep than " + path("s0.db") +
                     " run 1 (shard 0/3): another shard count (N = 2, not 3)");
}

TEST_F(CliMerge, RefusesAMissingInput) {
  expect_refused(path("merged.db"), {run_shard("0/3", "s0.db"), path("absent.db")}, "absent.db: database not found");
}

TEST_F(CliMerge, RefusesTheOutputAsAnInput) {
  const auto shards = run_three_shards();
  expect_refused(shards[0], shards, "s0.db: the output is also an input");
}

TEST_F(CliMerge, HelpNamesTheExitCodeOfAnIncompleteMerge) {
  const Outcome help = run("merge --help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.output.find("Exit 3"), std::string::npos) << help.output;
  EXPECT_NE(run("--help").output.find("3 merged but shards or"), std::string::npos);
}

}  // namespace
