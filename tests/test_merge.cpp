// attnsweep merge at the storage level: shard databases written by the Store
// (synthetic results for the plan indexes of each shard) merged into one run
// that holds every case of the plan with all its rows; merging again adds
// nothing; every refusal leaves the output as it was (or absent).
#include <gtest/gtest.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "runner/common/errors.hpp"
#include "runner/common/sha256.hpp"
#include "runner/config/config.hpp"
#include "runner/measure/statistics.hpp"
#include "runner/plan/cost.hpp"
#include "runner/plan/plan.hpp"
#include "runner/plan/shard.hpp"
#include "runner/scale_out/merge.hpp"
#include "runner/storage/run_reader.hpp"
#include "runner/storage/store.hpp"
#include "runner/storage/trace_location.hpp"
#include "tests/support/file_text.hpp"
#include "tests/support/released_together.hpp"
#include "tests/support/scratch_directory.hpp"
#include "tests/support/shard_sweeps.hpp"

namespace attnsweep::storage {
namespace {

using scale_out::kMergedRunSource;
using scale_out::merge_shards;
using scale_out::MergeReport;
using scale_out::ShardMerge;

namespace fs = std::filesystem;

const std::string kConfig = attnsweep::testing::six_case_sweep("merge-unit");

std::string file_bytes(const std::string& path) { return attnsweep::testing::read_file(path); }

// A config, its plan and its split, as attnsweep run --shard K/N computes them.
struct SweepSplit {
  std::string yaml;
  Config config;
  Plan plan;
  std::vector<std::vector<int>> parts;

  SweepSplit(const std::string& text, int count)
      : yaml(text), config(parse_config(text, "unit.yaml")), plan(make_plan(config)),
        parts(split_into_shards(plan, config.measure, count)) {}
  int count() const { return static_cast<int>(parts.size()); }
};

// How one shard run differs from a plain one of its sweep.
struct ShardRun {
  int index = 0;
  std::optional<std::vector<int>> plan_indexes;  // default: every case of the shard
  RunStatus status = RunStatus::done;
  std::string sweep_id;
  Device device = Device::cpu();
  std::string timing_protocol = "steady_clock per forward";
  std::string shard_split = kShardSplitVersion;
  std::map<std::string, std::string> env_vars;  // result-changing variables set for the run
  std::string torch_version = "2.11.0";
  std::string op_libraries;  // runs.op_libraries: each op library's build (schema 22)
  std::string hostname;  // default: node-K
};

// Synthetic results that differ per case and per shard run (`salt`).
CaseResult result_for(const Case& c, double salt) {
  CaseResult r;
  r.device = Device::cpu();
  r.timer = "steady_clock";
  r.stop_reason = StopReason::max_samples;
  const double base = 100.0 * (c.plan_index + 1) + salt;
  r.cpu_time_us = summarize({base, base + 1, base + 2});
  r.flops = 1e6 * (c.plan_index + 1);
  r.min_bytes = 1e3;
  r.trace_path = "traces/" + std::to_string(c.plan_index) + ".json";
  ProfileSummary profile;
  profile.profiled_forwards = 1;
  profile.attempts = 1;
  profile.cpu_ops_per_forward = 3;
  profile.kernels = {{"synthetic_kernel_" + c.variant, "kernel", 1, base / 2, base / 2, base / 2, base / 2, 7}};
  // Not in key order: the order the profiler gave must survive the merge.
  profile.ops = {{"aten::softmax", "op", 1, base / 5, base / 5}, {"aten::matmul", "op", 2, base / 4, base / 3}};
  r.profile = profile;
  for (int i = 0; i < 3; ++i) r.samples.push_back({std::nullopt, base + i, 1.0 + i});
  return r;
}

// Writes one shard run of `sweep` into the database at `path` (created or
// appended to) as attnsweep run --shard would; returns its run_id.
std::int64_t write_shard(const std::string& path, const SweepSplit& sweep, const ShardRun& shard) {
  const std::vector<int>& part = sweep.parts.at(static_cast<std::size_t>(shard.index));
  RunRecord run;
  run.name = sweep.config.name;
  run.config_path = "unit.yaml";
  run.config_yaml = sweep.yaml;
  run.config_sha256 = sha256_hex(sweep.yaml);
  run.environment.device = shard.device;
  run.environment.device_name = "test CPU";
  run.environment.hostname = shard.hostname.empty() ? "node-" + std::to_string(shard.index) : shard.hostname;
  run.environment.torch_version = shard.torch_version;
  run.environment.env_vars = shard.env_vars;
  run.op_libraries = shard.op_libraries;
  run.timing_protocol = shard.timing_protocol;
  run.flop_convention = "attended_pairs_v1";
  run.seed = sweep.config.seed;
  run.measure = sweep.config.measure;
  run.planned_cases = static_cast<int>(part.size());
  run.sweep_cases = static_cast<int>(sweep.plan.cases.size());
  run.shard_index = shard.index;
  run.shard_count = sweep.count();
  run.shard_source = "--shard";
  run.shard_split = shard.shard_split;
  run.sweep_id = shard.sweep_id;
  Store store(path);
  const std::int64_t run_id = store.begin_run(run);
  store.add_run_device(run_id, {run.environment, std::nullopt, std::nullopt});
  const double salt = 0.25 * static_cast<double>(run_id) + 0.5 * shard.index;
  for (const int index : shard.plan_indexes.value_or(part)) {
    const Case& c = sweep.plan.cases.at(static_cast<std::size_t>(index));
    store.add_case(run_id, c, result_for(c, salt));
  }
  store.finish_run(run_id, shard.status);
  return run_id;
}

// The rows a statement selects, one text line each, leaving out the columns
// that name rows rather than hold results (keys the merge gives new values).
std::vector<std::string> rows_of(const std::string& path, const std::string& sql, std::int64_t key,
                                 const std::set<std::string>& left_out = {"case_id", "run_id"}) {
  SQLite::Database db(path, SQLite::OPEN_READONLY);
  SQLite::Statement query(db, sql);
  query.bind(1, key);
  std::vector<std::string> rows;
  while (query.executeStep()) {
    std::string line;
    for (int i = 0; i < query.getColumnCount(); ++i) {
      if (left_out.count(query.getColumnName(i))) continue;
      line += std::string(query.getColumnName(i)) + "=" + (query.getColumn(i).isNull() ? "NULL" : query.getColumn(i).getString()) + " ";
    }
    rows.push_back(line);
  }
  return rows;
}

std::int64_t count_of(const std::string& path, const std::string& sql) {
  SQLite::Database db(path, SQLite::OPEN_READONLY);
  return db.execAndGet(sql).getInt64();
}

std::vector<RunRow> merged_runs(const std::string& path) {
  std::vector<RunRow> runs;
  for (RunRow& run : RunReader(path).runs()) {
    if (run.shard_source == kMergedRunSource) runs.push_back(std::move(run));
  }
  return runs;
}

class Merge : public ::testing::Test {
 protected:
  std::string path(const std::string& name) const { return scratch_.path(name); }

  // Shards 0..N-1 of `sweep`, each in its own database shard<K>.db.
  std::vector<std::string> write_all_shards(const SweepSplit& sweep, const std::string& prefix = "shard") {
    std::vector<std::string> paths;
    for (int index = 0; index < sweep.count(); ++index) {
      paths.push_back(path(prefix + std::to_string(index) + ".db"));
      write_shard(paths.back(), sweep, {index});
    }
    return paths;
  }

  // merge_shards refuses with one line holding `expected`, and leaves the output as it was (or absent).
  void expect_refused(const std::vector<std::string>& inputs, const std::string& expected, const std::string& out = "") {
    const std::string target = out.empty() ? out_ : out;
    const bool existed = fs::exists(target);
    const std::string before = existed ? file_bytes(target) : "";
    try {
      merge_shards(target, inputs);
      ADD_FAILURE() << "merged; expected a refusal with: " << expected;
    } catch (const BadInputError& error) {
      const std::string message = error.what();
      EXPECT_NE(message.find(expected), std::string::npos) << message;
      EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    }
    EXPECT_EQ(fs::exists(target), existed);
    if (existed) EXPECT_EQ(file_bytes(target), before) << "the output changed";
  }

  attnsweep::testing::ScratchDirectory scratch_{"attnsweep-merge"};
  SweepSplit sweep_{kConfig, 3};
  std::string out_ = path("merged.db");
};

TEST_F(Merge, TheSweepSplitsIntoThreeShardsOfTwoCases) {
  ASSERT_EQ(sweep_.plan.cases.size(), 6u);
  for (const auto& part : sweep_.parts) EXPECT_EQ(part.size(), 2u);
}

TEST_F(Merge, ThreeShardsHoldEveryCaseOfThePlanWithAllTheirRows) {
  const auto inputs = write_all_shards(sweep_);
  const MergeReport report = merge_shards(out_, inputs);
  EXPECT_TRUE(report.created);
  EXPECT_EQ(report.status, RunStatus::done);
  EXPECT_EQ(report.cases_added, 6);
  EXPECT_EQ(report.merged_cases, 6);
  EXPECT_TRUE(report.missing_shards().empty());
  ASSERT_EQ(report.shards.size(), 3u);
  for (const ShardMerge& shard : report.shards) {
    EXPECT_EQ(shard.state, ShardMerge::State::merged);
    EXPECT_EQ(shard.cases_added, 2);
    EXPECT_EQ(shard.source_db, inputs[static_cast<std::size_t>(shard.index)]);
  }

  const RunReader reader(out_);
  const auto cases = reader.cases(report.run_id);
  ASSERT_EQ(cases.size(), sweep_.plan.cases.size());
  for (const CaseRow& merged : cases) {
    const Case& planned = sweep_.plan.cases[static_cast<std::size_t>(merged.identity.plan_index)];
    EXPECT_EQ(merged.identity.label(), planned.label());
    ASSERT_TRUE(merged.shard_index);
    const std::string& shard_db = inputs[static_cast<std::size_t>(*merged.shard_index)];
    const auto& part = sweep_.parts[static_cast<std::size_t>(*merged.shard_index)];
    EXPECT_NE(std::find(part.begin(), part.end(), merged.identity.plan_index), part.end());
    // The case and every row of it, as its shard stored them.
    const std::int64_t shard_case =
        count_of(shard_db, "SELECT case_id FROM cases WHERE plan_index = " + std::to_string(merged.identity.plan_index));
    EXPECT_EQ(rows_of(out_, "SELECT * FROM cases WHERE case_id = ?", merged.case_id),
              rows_of(shard_db, "SELECT * FROM cases WHERE case_id = ?", shard_case));
    for (const std::string table : {"samples", "kernels", "ops"}) {
      const std::string sql = "SELECT * FROM " + table + " WHERE case_id = ? ORDER BY rowid";
      const auto rows = rows_of(out_, sql, merged.case_id);
      EXPECT_FALSE(rows.empty()) << table;
      EXPECT_EQ(rows, rows_of(shard_db, sql, shard_case)) << table;
    }
  }
  EXPECT_EQ(count_of(out_, "SELECT count(*) FROM samples"), 6 * 3);
  EXPECT_EQ(count_of(out_, "SELECT count(*) FROM kernels"), 6);
  EXPECT_EQ(count_of(out_, "SELECT count(*) FROM ops"), 6 * 2);
  EXPECT_EQ(count_of(out_, "SELECT count(*) FROM results WHERE trace_path IS NOT NULL"), 6);
}

// Shards in folders of their own, merged into a third: each case's trace path
// still leads to the file its shard wrote (result_for names traces/<plan
// index>.json, relative to the current directory), now from the output's folder.
TEST_F(Merge, TracePathsAreRebasedOntoTheOutputsFolder) {
  std::vector<std::string> inputs;
  for (int index = 0; index < sweep_.count(); ++index) {
    const fs::path folder = fs::path(path("gathered")) / ("shard-" + std::to_string(index));
    fs::create_directories(folder);
    inputs.push_back((folder / "results.db").string());
    write_shard(inputs.back(), sweep_, ShardRun{index});
  }
  const std::string out = path("merged/all.db");
  fs::create_directories(fs::path(out).parent_path());
  merge_shards(out, inputs);
  const RunReader reader(out);
  const RunRow run = *reader.latest_run();
  EXPECT_EQ(run.trace_path_base, "database");
  int checked = 0;
  for (const CaseRow& merged : reader.cases(run.run_id)) {
    const fs::path written = fs::absolute("traces/" + std::to_string(merged.identity.plan_index) + ".json");
    EXPECT_EQ(merged.trace_path, written.lexically_relative(fs::path(out).parent_path()).string());
    EXPECT_EQ(trace_file_of(out, run.trace_path_base, merged.trace_path), written.lexically_normal().string());
    ++checked;
  }
  EXPECT_EQ(checked, 6);
}

TEST_F(Merge, TheMergedRunIsMarkedAsOneAndRecordsItsShards) {
  const auto inputs = write_all_shards(sweep_);
  const MergeReport report = merge_shards(out_, inputs);
  const RunRow run = RunReader(out_).run(report.run_id).value();
  const RunRow shard0 = RunReader(inputs[0]).runs().front();
  EXPECT_EQ(run.status, RunStatus::done);
  EXPECT_EQ(run.shard_source, "merge");
  EXPECT_EQ(run.shard_count, 3);
  EXPECT_FALSE(run.shard_index);
  EXPECT_EQ(run.planned_cases, 6);
  EXPECT_EQ(run.sweep_cases, 6);
  EXPECT_EQ(run.shard_split, kShardSplitVersion);
  EXPECT_EQ(run.run_uuid.size(), 36u);
  EXPECT_NE(run.run_uuid, shard0.run_uuid);
  EXPECT_EQ(run.config_sha256, shard0.config_sha256);
  EXPECT_EQ(run.hostname, "node-0");  // from the lowest shard
  EXPECT_FALSE(run.owner_pid);
  EXPECT_FALSE(run.finished_at.empty());
  EXPECT_LE(run.started_at, shard0.started_at);
  EXPECT_EQ(count_of(out_, "SELECT count(*) FROM merged_shards WHERE run_id = " + std::to_string(report.run_id) +
                               " AND planned_cases = 2 AND merged_cases = 2 AND source_status = 'done'"), 3);
  EXPECT_EQ(rows_of(out_, "SELECT source_run_uuid FROM merged_shards WHERE shard_index = ?", 0),
            std::vector<std::string>{"source_run_uuid=" + shard0.run_uuid + " "});
  // One device row per shard, which the results view joins on.
  EXPECT_EQ(count_of(out_, "SELECT count(*) FROM run_devices WHERE run_id = " + std::to_string(report.run_id)), 3);
  EXPECT_EQ(count_of(out_, "SELECT count(DISTINCT d.hostname) FROM cases c JOIN run_devices d ON d.run_id = c.run_id "
                           "AND d.shard_index = c.shard_index AND d.device = c.device"), 3);
}

TEST_F(Merge, InputsAreOnlyRead) {
  const auto inputs = write_all_shards(sweep_);
  std::vector<std::string> before;
  for (const auto& input : inputs) before.push_back(file_bytes(input));
  merge_shards(out_, inputs);
  for (std::size_t i = 0; i < inputs.size(); ++i) EXPECT_EQ(file_bytes(inputs[i]), before[i]) << inputs[i];
}

TEST_F(Merge, MergingAgainAddsNothingAndWritesNothing) {
  const auto inputs = write_all_shards(sweep_);
  const MergeReport first = merge_shards(out_, inputs);
  const std::string before = file_bytes(out_);
  const MergeReport again = merge_shards(out_, inputs);
  EXPECT_EQ(again.run_id, first.run_id);
  EXPECT_FALSE(again.created);
  EXPECT_EQ(again.status, RunStatus::done);
  EXPECT_EQ(again.cases_added, 0);
  EXPECT_EQ(again.merged_cases, 6);
  for (const ShardMerge& shard : again.shards) EXPECT_EQ(shard.state, ShardMerge::State::already_merged);
  EXPECT_EQ(file_bytes(out_), before);
  // One shard alone, again: nothing either, and the others show as merged earlier.
  const MergeReport one = merge_shards(out_, {inputs[1]});
  EXPECT_EQ(one.shards[1].state, ShardMerge::State::already_merged);
  EXPECT_EQ(one.shards[0].state, ShardMerge::State::merged_earlier);
  EXPECT_EQ(file_bytes(out_), before);
}

TEST_F(Merge, TheSameShardGivenTwiceIsTakenOnce) {
  const auto inputs = write_all_shards(sweep_);
  const MergeReport report = merge_shards(out_, {inputs[0], inputs[1], inputs[2], inputs[1]});
  EXPECT_EQ(report.status, RunStatus::done);
  EXPECT_EQ(report.shards[1].cases_added, 2);
  EXPECT_EQ(report.shards[1].state, ShardMerge::State::merged);
  EXPECT_EQ(count_of(out_, "SELECT count(*) FROM cases"), 6);
}

TEST_F(Merge, MissingShardsLeaveTheRunIncompleteUntilTheyArrive) {
  const auto inputs = write_all_shards(sweep_);
  const MergeReport partial = merge_shards(out_, {inputs[2], inputs[0]});
  EXPECT_EQ(partial.status, RunStatus::incomplete);
  EXPECT_EQ(partial.missing_shards(), std::vector<int>{1});
  EXPECT_EQ(partial.shards[1].state, ShardMerge::State::missing);
  EXPECT_EQ(partial.merged_cases, 4);
  EXPECT_EQ(RunReader(out_).run(partial.run_id)->status, RunStatus::incomplete);

  const MergeReport rest = merge_shards(out_, {inputs[1]});
  EXPECT_EQ(rest.run_id, partial.run_id);
  EXPECT_FALSE(rest.created);
  EXPECT_EQ(rest.status, RunStatus::done);
  EXPECT_EQ(rest.cases_added, 2);
  EXPECT_EQ(rest.shards[0].state, ShardMerge::State::merged_earlier);
  EXPECT_EQ(RunReader(out_).run(rest.run_id)->status, RunStatus::done);
  EXPECT_EQ(RunReader(out_).cases(rest.run_id).size(), 6u);
  EXPECT_EQ(merged_runs(out_).size(), 1u);
}

TEST_F(Merge, AResumedShardMergedAgainAddsOnlyItsNewCases) {
  const auto inputs = write_all_shards(sweep_);
  const std::string interrupted = path("interrupted1.db");
  const std::vector<int>& part = sweep_.parts[1];
  const std::int64_t run_id = write_shard(interrupted, sweep_, {1, std::vector<int>{part[0]}, RunStatus::interrupted});
  const MergeReport first = merge_shards(out_, {inputs[0], interrupted, inputs[2]});
  EXPECT_EQ(first.status, RunStatus::incomplete);
  EXPECT_TRUE(first.missing_shards().empty());
  EXPECT_EQ(first.shards[1].merged_cases, 1);
  EXPECT_EQ(first.shards[1].planned_cases, 2);
  EXPECT_EQ(first.shards[1].source_status, "interrupted");
  EXPECT_FALSE(first.shards[1].complete());

  {  // --resume stores the rest of the shard in the same run
    Store store(interrupted);
    const Case& c = sweep_.plan.cases[static_cast<std::size_t>(part[1])];
    store.add_case(run_id, c, result_for(c, 9));
    store.finish_run(run_id, RunStatus::done);
  }
  const MergeReport second = merge_shards(out_, {interrupted});
  EXPECT_EQ(second.run_id, first.run_id);
  EXPECT_EQ(second.cases_added, 1);
  EXPECT_EQ(second.status, RunStatus::done);
  EXPECT_EQ(second.shards[1].source_status, "done");
  EXPECT_EQ(count_of(out_, "SELECT count(*) FROM cases"), 6);
  EXPECT_EQ(count_of(out_, "SELECT count(*) FROM samples"), 6 * 3);
}

TEST_F(Merge, TheMergedRunDoesNotDependOnTheOrderOfMerges) {
  const auto inputs = write_all_shards(sweep_);
  const std::string stepwise = path("stepwise.db");
  merge_shards(stepwise, {inputs[2]});
  merge_shards(stepwise, {inputs[1], inputs[0]});
  merge_shards(out_, {inputs[0], inputs[1], inputs[2]});
  const std::set<std::string> differ = {"run_id", "run_uuid", "finished_at"};
  EXPECT_EQ(rows_of(stepwise, "SELECT * FROM runs WHERE run_id = ?", 1, differ),
            rows_of(out_, "SELECT * FROM runs WHERE run_id = ?", 1, differ));
  EXPECT_EQ(rows_of(stepwise, "SELECT * FROM cases WHERE run_id = ? ORDER BY plan_index", 1),
            rows_of(out_, "SELECT * FROM cases WHERE run_id = ? ORDER BY plan_index", 1));
}

TEST_F(Merge, ASecondLaunchOfTheSweepBecomesAnotherMergedRun) {
  const auto first_launch = write_all_shards(sweep_, "first");
  const auto second_launch = write_all_shards(sweep_, "second");
  const MergeReport first = merge_shards(out_, first_launch);
  const MergeReport second = merge_shards(out_, second_launch);
  EXPECT_TRUE(second.created);
  EXPECT_NE(second.run_id, first.run_id);
  EXPECT_EQ(second.status, RunStatus::done);
  EXPECT_EQ(merged_runs(out_).size(), 2u);
}

TEST_F(Merge, OtherRunsOfTheOutputAreLeftAsTheyWere) {
  const SweepSplit other(std::string(kConfig) + "seed: 11\n", 1);
  write_shard(out_, other, {0});  // a shard run of another sweep, never merged
  {
    Store store(out_);
    RunRecord plain;
    plain.name = "plain";
    plain.config_yaml = "variants: [naive]\n";
    plain.config_sha256 = "abc";
    plain.environment.device = Device::cpu();
    plain.timing_protocol = "p";
    plain.flop_convention = "f";
    const std::int64_t run_id = store.begin_run(plain);
    const Case& c = sweep_.plan.cases[0];
    store.add_case(run_id, c, result_for(c, 3));
    store.finish_run(run_id, RunStatus::done);
  }
  const auto dump = [&](std::int64_t run_id) {
    auto rows = rows_of(out_, "SELECT * FROM runs WHERE run_id = ?", run_id, {});
    for (const auto& row : rows_of(out_, "SELECT * FROM cases WHERE run_id = ?", run_id, {})) rows.push_back(row);
    for (const auto& row : rows_of(out_, "SELECT s.* FROM samples s JOIN cases c USING (case_id) WHERE c.run_id = ?", run_id, {})) {
      rows.push_back(row);
    }
    return rows;
  };
  const auto before1 = dump(1), before2 = dump(2);
  const MergeReport report = merge_shards(out_, write_all_shards(sweep_));
  EXPECT_EQ(report.run_id, 3);
  EXPECT_EQ(dump(1), before1);
  EXPECT_EQ(dump(2), before2);
  EXPECT_EQ(count_of(out_, "SELECT count(*) FROM runs"), 3);
}

// ---- refusals -----------------------------------------------------------------

TEST_F(Merge, RefusesAMissingInput) {
  const auto inputs = write_all_shards(sweep_);
  expect_refused({inputs[0], path("absent.db")}, "absent.db: database not found");
}

TEST_F(Merge, RefusesAFileThatIsNotAnAttnsweepDatabase) {
  const std::string notes = scratch_.write("notes.db", "not a database at all, just some text long enough......");
  expect_refused({notes}, "notes.db");
}

TEST_F(Merge, RefusesAnInputOfAnotherSchemaVersionAndLeavesIt) {
  const std::string old = path("v5.db");
  fs::copy_file(ATTNSWEEP_SOURCE_DIR "/tests/data/schema_v5.db", old);
  const std::string before = file_bytes(old);
  expect_refused({write_all_shards(sweep_)[0], old},
                 "v5.db: database schema version 5, but merge takes version " + std::to_string(kSchemaVersion));
  EXPECT_EQ(file_bytes(old), before);
}

TEST_F(Merge, RefusesAnInputWithoutRuns) {
  const std::string empty = path("empty.db");
  { Store store(empty); }
  expect_refused({empty}, "empty.db: holds no runs");
}

TEST_F(Merge, RefusesARunThatIsNotAShard) {
  const std::string plain = path("plain.db");
  {
    Store store(plain);
    RunRecord run;
    run.name = "plain";
    run.config_yaml = kConfig;
    run.config_sha256 = sha256_hex(kConfig);
    run.environment.device = Device::cpu();
    run.timing_protocol = "p";
    run.flop_convention = "f";
    store.begin_run(run);
  }
  expect_refused({write_all_shards(sweep_)[0], plain}, "plain.db: run 1 is not a shard");
}

TEST_F(Merge, RefusesAMergedRunAsAnInput) {
  const auto inputs = write_all_shards(sweep_);
  merge_shards(out_, inputs);
  expect_refused({out_}, "merged.db: run 1 is a merged run", path("again.db"));
}

TEST_F(Merge, RefusesShardsOfAnotherConfig) {
  const SweepSplit other(std::string(kConfig) + "seed: 11\n", 3);
  const std::string foreign = path("other.db");
  write_shard(foreign, other, {1});
  expect_refused({write_all_shards(sweep_)[0], foreign}, "other.db: run 1 (shard 1/3) is of another sweep than ");
  expect_refused({write_all_shards(sweep_)[0], foreign}, ": another config (sha256 " + sha256_hex(other.yaml).substr(0, 12));
}

TEST_F(Merge, RefusesShardsOfAnotherShardCount) {
  const SweepSplit halves(kConfig, 2);
  const std::string half = path("half.db");
  write_shard(half, halves, {1});
  expect_refused({write_all_shards(sweep_)[0], half}, "another shard count (N = 2, not 3)");
}

TEST_F(Merge, RefusesShardsOfAnotherSplitVersion) {
  const auto inputs = write_all_shards(sweep_);
  const std::string older = path("older.db");
  ShardRun shard{1};
  shard.shard_split = "cost_lpt_v0";
  write_shard(older, sweep_, shard);
  expect_refused({inputs[0], older}, "another split version ('cost_lpt_v0', not 'cost_lpt_v1')");
  expect_refused({older}, "was split by 'cost_lpt_v0', but this attnsweep splits by 'cost_lpt_v1'");
}

// A shard run of another launch, device kind or timing protocol than its sweep's
// other shards: the refusal names what differs, with both values.
TEST_F(Merge, RefusesShardsOfAnotherLaunchDeviceKindOrTimingProtocol) {
  struct Difference {
    const char* database;
    std::function<void(ShardRun&)> make;
    const char* refusal;
  };
  const Difference differences[] = {
      {"launched.db", [](ShardRun& shard) { shard.sweep_id = "slurm-42"; },
       "another launch (sweep id 'slurm-42', not no sweep id)"},
      {"gpu.db", [](ShardRun& shard) { shard.device = Device::cuda(0); }, "another device kind (cuda:0, not cpu)"},
      {"timed.db", [](ShardRun& shard) { shard.timing_protocol = "another protocol"; },
       "another timing protocol ('another protocol'"},
  };
  const std::string first_shard = write_all_shards(sweep_)[0];
  for (const Difference& difference : differences) {
    SCOPED_TRACE(difference.database);
    ShardRun shard{1};
    difference.make(shard);
    write_shard(path(difference.database), sweep_, shard);
    expect_refused({first_shard, path(difference.database)}, difference.refusal);
  }
}

// A shard run under a test knob, another torch or another GPU model would make
// the merged run a mix that compares as one run (issue 21, finding 12).
TEST_F(Merge, RefusesAShardRunInAnotherEnvironment) {
  const auto inputs = write_all_shards(sweep_);
  const std::string slow = path("slow.db");
  ShardRun shard{1};
  shard.env_vars = {{"ATTNSWEEP_TEST_SLOWDOWN", "naive"}, {"OMP_NUM_THREADS", "1"}};
  shard.torch_version = "2.10.0";
  write_shard(slow, sweep_, shard);
  expect_refused({inputs[0], slow, inputs[2]},
                 "slow.db: run 1 (shard 1/3) ran in another environment than " + inputs[0] + " run 1 (shard 0/3): "
                 "torch_version '2.10.0', not '2.11.0'; env_vars ATTNSWEEP_TEST_SLOWDOWN 'naive', not unset; "
                 "env_vars OMP_NUM_THREADS '1', not unset; the shards of one merged run must measure in one environment");
  // A variable unset in the shard but set in the others is a difference too.
  ShardRun plain{0};
  plain.env_vars = {{"CUDNN_LOGINFO_DBG", "1"}};
  write_shard(path("logged.db"), sweep_, plain);
  expect_refused({path("logged.db"), inputs[1]},
                 "shard1.db: run 1 (shard 1/3) ran in another environment than " + path("logged.db"));
  expect_refused({path("logged.db"), inputs[1]}, ": env_vars CUDNN_LOGINFO_DBG unset, not '1'; ");
}

// An op library rebuilt between two shards' runs (another build on another host, say) measures
// another kernel under the same variant name: as another torch would (issue 38's version fact).
TEST_F(Merge, RefusesAShardThatLoadedAnotherOpLibraryBuild) {
  ShardRun first{0}, second{1}, third{2};
  first.op_libraries = third.op_libraries = R"({"fa3":"0123456789abcdef"})";
  second.op_libraries = R"({"fa3":"fedcba9876543210"})";
  const std::string built[] = {path("built0.db"), path("built1.db"), path("built2.db")};
  write_shard(built[0], sweep_, first);
  write_shard(built[1], sweep_, second);
  write_shard(built[2], sweep_, third);
  expect_refused({built[0], built[1], built[2]},
                 "built1.db: run 1 (shard 1/3) ran in another environment than " + built[0] + " run 1 (shard 0/3): "
                 "op_libraries '{\"fa3\":\"fedcba9876543210\"}', not '{\"fa3\":\"0123456789abcdef\"}'; the shards "
                 "of one merged run must measure in one environment");
  second.op_libraries = first.op_libraries;
  write_shard(path("rebuilt1.db"), sweep_, second);
  EXPECT_EQ(merge_shards(out_, {built[0], path("rebuilt1.db"), built[2]}).status, RunStatus::done);
  EXPECT_EQ(rows_of(out_, "SELECT op_libraries FROM runs WHERE run_id = ?", 1),
            (std::vector<std::string>{R"(op_libraries={"fa3":"0123456789abcdef"} )"}));
}

TEST_F(Merge, RefusesAShardOfAnotherEnvironmentThanTheMergedRunTookEarlier) {
  const auto inputs = write_all_shards(sweep_);
  merge_shards(out_, {inputs[0], inputs[1]});
  const std::string other = path("other-gpu.db");
  ShardRun shard{2};
  shard.torch_version = "2.12.0.dev";
  write_shard(other, sweep_, shard);
  expect_refused({other}, "other-gpu.db: run 1 (shard 2/3) ran in another environment than the shards run 1 in " +
                              out_ + " took earlier: torch_version '2.12.0.dev', not '2.11.0'");
  EXPECT_EQ(merge_shards(out_, {inputs[2]}).status, RunStatus::done);
}

// Shards of one launch run on many hosts: merged, each shard's host kept in run_devices.
TEST_F(Merge, ShardsOnOtherHostsMergeAndEachShardsHostIsKept) {
  const auto inputs = write_all_shards(sweep_);
  EXPECT_EQ(merge_shards(out_, inputs).status, RunStatus::done);
  EXPECT_EQ(rows_of(out_, "SELECT shard_index, hostname FROM run_devices WHERE run_id = ? ORDER BY shard_index", 1),
            (std::vector<std::string>{"shard_index=0 hostname=node-0 ", "shard_index=1 hostname=node-1 ",
                                      "shard_index=2 hostname=node-2 "}));
}

TEST_F(Merge, RefusesTwoRunsOfOneShard) {
  const auto inputs = write_all_shards(sweep_);
  const std::string again = path("again1.db");
  write_shard(again, sweep_, {1});
  expect_refused({inputs[0], inputs[1], again}, "again1.db: run 1 (shard 1/3) and " + inputs[1] +
                                                    " run 1 (shard 1/3) are two runs of one shard");
}

TEST_F(Merge, RefusesAShardThatTheMergedRunTookFromAnotherRun) {
  const auto inputs = write_all_shards(sweep_);
  merge_shards(out_, {inputs[0], inputs[1]});
  const std::string again = path("again0.db");
  write_shard(again, sweep_, {0});
  expect_refused({inputs[1], again}, "again0.db: run 1 (shard 0/3) is another run of a shard that run 1 in " + out_ +
                                         " took from " + inputs[0]);
}

TEST_F(Merge, RefusesACaseOutsideItsShard) {
  const auto inputs = write_all_shards(sweep_);
  const int moved = sweep_.parts[1][0], elsewhere = sweep_.parts[2][0];
  {
    SQLite::Database db(inputs[1], SQLite::OPEN_READWRITE);
    db.exec("UPDATE cases SET plan_index = " + std::to_string(elsewhere) + " WHERE plan_index = " + std::to_string(moved));
  }
  Case stored = sweep_.plan.cases[static_cast<std::size_t>(moved)];
  expect_refused(inputs, "shard1.db: run 1 (shard 1/3): its case at plan_index " + std::to_string(elsewhere) + " (" +
                             stored.label() + ") is not one of the shard's");
}

// A shard's case at a plan index that is not the case the config plans there: of
// another shape, or of another pass (issue 23: not the plan's case either).
TEST_F(Merge, RefusesACaseThatIsNotThePlansByShapeOrPass) {
  struct Changed {
    const char* what;                   // also the prefix of the shards' files
    int shard;                          // whose first case is changed
    const char* set;                    // the change, in SQL
    std::function<void(Case&)> change;  // the same change to the planned case
  };
  const Changed changes[] = {
      {"head_dim", 2, "head_dim = 16", [](Case& c) { c.shape.head_dim = 16; }},
      {"pass", 0, "pass = 'backward'", [](Case& c) { c.pass = Pass::backward; }},
  };
  for (const Changed& changed : changes) {
    SCOPED_TRACE(changed.what);
    const auto inputs = write_all_shards(sweep_, changed.what);
    const Case& planned = sweep_.plan.cases[static_cast<std::size_t>(sweep_.parts[changed.shard][0])];
    {
      SQLite::Database db(inputs[changed.shard], SQLite::OPEN_READWRITE);
      db.exec(std::string("UPDATE cases SET ") + changed.set + " WHERE plan_index = " +
              std::to_string(planned.plan_index));
    }
    Case stored = planned;
    changed.change(stored);
    expect_refused(inputs, changed.what + std::to_string(changed.shard) + ".db: run 1 (shard " +
                               std::to_string(changed.shard) + "/3): its case at plan_index " +
                               std::to_string(planned.plan_index) + " is " + stored.label() +
                               ", but the config plans " + planned.label() + " there");
  }
}

TEST_F(Merge, RefusesTheOutputAsAnInput) {
  const auto inputs = write_all_shards(sweep_);
  fs::create_hard_link(inputs[2], path("link.db"));
  expect_refused({inputs[0], inputs[1], inputs[2]}, "the output is also an input", inputs[2]);
  expect_refused({inputs[0], inputs[1], inputs[2]}, "link.db: the output is also an input (" + inputs[2], path("link.db"));
}

TEST_F(Merge, RefusesAnOutputHoldingAShardOfTheSweep) {
  const auto inputs = write_all_shards(sweep_);
  expect_refused({inputs[1], inputs[2]}, "shard0.db: holds run 1, shard 0/3 of this very sweep", inputs[0]);
}

TEST_F(Merge, RefusesAnOutputThatIsNotAnAttnsweepDatabase) {
  const std::string notes = scratch_.write("notes.db", "my precious notes, not a database, long enough for a header........");
  expect_refused(write_all_shards(sweep_), "notes.db: cannot use as a results database", notes);
}

// Issue 21, finding 9: merges into one new output, released together from a
// pipe, all succeed and the output holds one merged run with every case.
// Before, the merge that made the empty output removed it when it failed
// ("database is locked"), under the others ("disk I/O error").
TEST_F(Merge, MergesIntoOneNewOutputAtOnceAllSucceed) {
  const auto inputs = write_all_shards(sweep_);
  constexpr int kRounds = 60, kMerges = 4;
  for (int round = 0; round < kRounds; ++round) {
    const std::string out = path("at-once" + std::to_string(round) + ".db");
    const std::vector<int> exit_codes = attnsweep::testing::race_processes(kMerges, [&](int i) {
      try {
        merge_shards(out, inputs);
        return 0;
      } catch (const std::exception& error) {
        std::fprintf(stderr, "merge %d: %s\n", i, error.what());
        return 2;
      }
    });
    ASSERT_EQ(exit_codes.size(), static_cast<std::size_t>(kMerges)) << "round " << round;
    for (const int exit_code : exit_codes) EXPECT_EQ(exit_code, 0) << "round " << round;
    ASSERT_TRUE(fs::exists(out)) << "round " << round;
    SQLite::Database check(out, SQLite::OPEN_READONLY);
    EXPECT_EQ(check.execAndGet("SELECT count(*) FROM runs").getInt(), 1) << "round " << round;
    EXPECT_EQ(check.execAndGet("SELECT count(*) FROM cases").getInt(), 6) << "round " << round;
  }
}

}  // namespace
}  // namespace attnsweep::storage
