// The SQLite store on real files: round trip, versioning, refusal of foreign,
// newer, damaged or absent databases (left byte-identical), one transaction per
// case, and the claim a process holds on the run it runs.
#include <gtest/gtest.h>

#include <limits>

#include <SQLiteCpp/SQLiteCpp.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <vector>

#include "runner/common/errors.hpp"
#include "runner/storage/fields.hpp"
#include "runner/storage/run_reader.hpp"
#include "runner/storage/sqlite_failure.hpp"
#include "runner/storage/store.hpp"
#include "tests/support/released_together.hpp"
#include "tests/support/run_record.hpp"
#include "tests/support/scratch_directory.hpp"
#include "tests/support/unit_gpu_case.hpp"

namespace attnsweep::storage {
namespace {

namespace fs = std::filesystem;

class StoreTest : public ::testing::Test {
 protected:
  attnsweep::testing::ScratchDirectory scratch_{"attnsweep-store"};
  std::string path_ = scratch_.path("results.db");

  static RunRecord run_record() {
    RunRecord run = attnsweep::testing::unit_run_record("unit");
    run.planned_cases = 2;
    return run;
  }

  static std::pair<Case, CaseResult> gpu_case() {
    auto [c, r] = attnsweep::testing::profiled_cudnn_case(3, Shape{8, 16, 16, 1024, 1024, 64});
    r.phases = {0.01, 0.02, 0.03, 0.5, 0.25, 0.125};
    r.profile->attempts = 1;
    r.profile->kernels_each_forward = {1, 1};
    // Launch metadata on one kernel; the memset has none.
    KernelStat cudnn = attnsweep::testing::launched_as_cudnn_attention(
        {"cudnn_generated_fort_native_sdpa", "kernel", 1, 57.1, 57.1, 56.9, 57.3, 7});
    cudnn.est_occupancy_pct = 0.0;
    r.profile->kernels = {cudnn, {"Memset (Device)", "memset", 1, 0.7, 0.7, 0.6, 0.8, 7}};
    r.profile->ops.push_back({"cudaMemsetAsync", "cuda_runtime", 1, 76.1, 76.1});
    for (int i = 0; i < 5; ++i) r.samples.push_back({80.0 + i, std::nullopt, 25.0 + i});
    return {c, r};
  }

};

TEST_F(StoreTest, RoundTripOfRunCaseKernelsOpsAndSamples) {
  std::int64_t run_id = 0, case_id = 0;
  {
    Store store(path_);
    run_id = store.begin_run(run_record());
    const auto [c, r] = gpu_case();
    case_id = store.add_case(run_id, c, r).value();
    store.finish_run(run_id, RunStatus::done);
  }
  SQLite::Database db(path_, SQLite::OPEN_READONLY);
  EXPECT_EQ(db.execAndGet("PRAGMA user_version").getInt(), kSchemaVersion);
  EXPECT_EQ(db.execAndGet("PRAGMA application_id").getInt(), kApplicationId);
  EXPECT_EQ(db.execAndGet("PRAGMA journal_mode").getString(), "wal");
  SQLite::Statement run(db, "SELECT name, status, device_name, seed, config_sha256, finished_at IS NOT NULL, planned_cases FROM runs");
  ASSERT_TRUE(run.executeStep());
  EXPECT_EQ(run.getColumn(0).getString(), "unit");
  EXPECT_EQ(run.getColumn(1).getString(), "done");
  EXPECT_EQ(run.getColumn(2).getString(), "NVIDIA H200");
  EXPECT_EQ(run.getColumn(3).getInt(), 7);
  EXPECT_EQ(run.getColumn(4).getString(), "abc123");
  EXPECT_EQ(run.getColumn(5).getInt(), 1);
  EXPECT_EQ(run.getColumn(6).getInt(), 2);

  SQLite::Statement row(db, "SELECT variant, plan_index, batch, seq_len_kv, dtype, causal, status, sdpa_backend, "
                            "kernels_per_forward, memcpy_per_forward, memset_per_forward, gpu_time_us_median, "
                            "gpu_time_us_p10, samples, cpu_time_us_median IS NULL, rel_error, peak_mem_bytes, tflops, "
                            "counts_consistent, kernel_time_us_per_forward FROM cases WHERE case_id = ?");
  row.bind(1, case_id);
  ASSERT_TRUE(row.executeStep());
  EXPECT_EQ(row.getColumn(0).getString(), "sdpa_cudnn");
  EXPECT_EQ(row.getColumn(1).getInt(), 3);
  EXPECT_EQ(row.getColumn(2).getInt(), 8);
  EXPECT_EQ(row.getColumn(3).getInt(), 1024);
  EXPECT_EQ(row.getColumn(4).getString(), "bf16");
  EXPECT_EQ(row.getColumn(5).getInt(), 1);
  EXPECT_EQ(row.getColumn(6).getString(), "ok");
  EXPECT_EQ(row.getColumn(7).getString(), "cudnn_attention");
  EXPECT_EQ(row.getColumn(8).getInt(), 1);
  EXPECT_EQ(row.getColumn(9).getInt(), 0);
  EXPECT_EQ(row.getColumn(10).getInt(), 1);
  EXPECT_DOUBLE_EQ(row.getColumn(11).getDouble(), 80);
  EXPECT_DOUBLE_EQ(row.getColumn(12).getDouble(), 78.6);
  EXPECT_EQ(row.getColumn(13).getInt(), 5);
  EXPECT_EQ(row.getColumn(14).getInt(), 1);
  EXPECT_DOUBLE_EQ(row.getColumn(15).getDouble(), 2e-3);
  EXPECT_EQ(row.getColumn(16).getInt64(), 123456789);
  EXPECT_DOUBLE_EQ(row.getColumn(17).getDouble(), 12.5);
  EXPECT_EQ(row.getColumn(18).getInt(), 1);
  EXPECT_DOUBLE_EQ(row.getColumn(19).getDouble(), 57.8);
  // 7 samples: the 95% interval of the median runs from the 1st to the 7th, (84 - 78) / 2 / 80.
  EXPECT_DOUBLE_EQ(db.execAndGet("SELECT median_ci_rel FROM cases").getDouble(), 0.0375);
  EXPECT_EQ(db.execAndGet("SELECT printf('%g %g %g %g %g %g', setup_seconds, accuracy_seconds, warmup_seconds, "
                          "timing_seconds, graph_seconds, profile_seconds) FROM cases").getString(),
            "0.01 0.02 0.03 0.5 0.25 0.125");

  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM kernels").getInt(), 2);
  EXPECT_EQ(db.execAndGet("SELECT kind FROM kernels WHERE name = 'Memset (Device)'").getString(), "memset");
  EXPECT_EQ(db.execAndGet("SELECT grid || ' ' || block || ' ' || registers_per_thread || ' ' || shared_memory_bytes || "
                          "' ' || est_occupancy_pct || ' ' || (blocks_per_sm IS NULL) FROM kernels WHERE kind = 'kernel'")
                .getString(),
            "[132,1,1] [384,1,1] 168 134144 0.0 1");
  EXPECT_EQ(db.execAndGet("SELECT grid IS NULL AND registers_per_thread IS NULL AND est_occupancy_pct IS NULL "
                          "FROM kernels WHERE kind = 'memset'").getInt(), 1);
  EXPECT_DOUBLE_EQ(db.execAndGet("SELECT self_cpu_us FROM ops WHERE name = 'cudaMemsetAsync'").getDouble(), 76.1);
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM samples").getInt(), 5);
  EXPECT_DOUBLE_EQ(db.execAndGet("SELECT gpu_time_us FROM samples WHERE sample_index = 4").getDouble(), 84);
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM samples WHERE cpu_time_us IS NULL").getInt(), 5);
  EXPECT_DOUBLE_EQ(db.execAndGet("SELECT host_dispatch_us FROM samples WHERE sample_index = 4").getDouble(), 29);
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM samples WHERE sm_clock_mhz IS NULL").getInt(), 5);
  EXPECT_DOUBLE_EQ(db.execAndGet("SELECT time_us_median FROM results").getDouble(), 80);
}

// Schema 7: the fingerprint, the regime and the clock event reasons are stored as given.
TEST_F(StoreTest, StoresTheEnvironmentFingerprintRegimeAndClockReasons) {
  {
    Store store(path_);
    RunRecord run = run_record();
    run.environment.power_limit_w = 700;
    run.environment.sm_clock_start_mhz = 1980;
    run.environment.mem_clock_start_mhz = 3201;
    run.environment.temperature_start_c = 34;
    run.environment.clock_event_reasons_start = 0x1;
    run.environment.env_vars = {{"CUDA_VISIBLE_DEVICES", "1"}, {"TORCH_CUDNN_V8_API_LRU_CACHE_LIMIT", "100"}};
    run.measure.regime = MeasureRegime::burst;
    run.measure.burst_cooldown_max_ms = 250;
    const std::int64_t run_id = store.begin_run(run);
    store.add_run_device(run_id, {run.environment, 900.0, 4000.0});
    auto [c, r] = gpu_case();
    r.samples[0].clock_event_reasons = 0x4;  // sw_power_cap
    r.samples[1].clock_event_reasons = 0x0;
    r.power_cap_share = 0.5;
    r.thermal_cap_share = 0.0;
    r.cooldown_seconds = 0.125;
    store.add_case(run_id, c, r);
  }
  SQLite::Database db(path_, SQLite::OPEN_READONLY);
  EXPECT_EQ(db.execAndGet("SELECT printf('%s %g %g %g %g %d %g', measure_regime, burst_cooldown_max_ms, power_limit_w, "
                          "sm_clock_start_mhz, mem_clock_start_mhz, clock_event_reasons_start, temperature_start_c) "
                          "FROM runs").getString(),
            "burst 250 700 1980 3201 1 34");
  const std::string env = R"({"CUDA_VISIBLE_DEVICES":"1","TORCH_CUDNN_V8_API_LRU_CACHE_LIMIT":"100"})";
  EXPECT_EQ(db.execAndGet("SELECT env_vars FROM runs").getString(), env);
  EXPECT_EQ(db.execAndGet("SELECT env_vars || ' ' || power_limit_w FROM run_devices").getString(), env + " 700.0");
  EXPECT_EQ(db.execAndGet("SELECT printf('%g %g %g', power_cap_share, thermal_cap_share, cooldown_seconds) FROM cases")
                .getString(),
            "0.5 0 0.125");
  EXPECT_EQ(db.execAndGet("SELECT group_concat(ifnull(clock_event_reasons, 'null'), ',') FROM "
                          "(SELECT clock_event_reasons FROM samples ORDER BY sample_index)").getString(),
            "4,0,null,null,null");
  EXPECT_DOUBLE_EQ(db.execAndGet("SELECT power_cap_share FROM results").getDouble(), 0.5);
  // The reader gives them back.
  const RunReader reader(path_);
  const RunRow row = reader.latest_run().value();
  EXPECT_EQ(row.measure_regime, "burst");
  EXPECT_EQ(row.power_limit_w, 700);
  EXPECT_EQ(row.env_vars, env);
  const CaseRow case_row = reader.cases(row.run_id).at(0);
  EXPECT_EQ(case_row.power_cap_share, 0.5);
  EXPECT_EQ(reader.samples(case_row.case_id).at(0).clock_event_reasons, 0x4u);
}

// An environment variable whose value is not UTF-8 is stored with U+FFFD, not a failed run.
TEST_F(StoreTest, AnEnvVarThatIsNotUtf8IsStoredWithAReplacementCharacter) {
  {
    Store store(path_);
    RunRecord run = run_record();
    run.environment.env_vars = {{"CUBLAS_X", std::string("a\xff" "b")}};
    store.begin_run(run);
  }
  SQLite::Database db(path_, SQLite::OPEN_READONLY);
  EXPECT_EQ(db.execAndGet("SELECT env_vars FROM runs").getString(), "{\"CUBLAS_X\":\"a\xef\xbf\xbd" "b\"}");
}

// A sustained run on the CPU: no GPU state, an empty env_vars object when nothing is set.
TEST_F(StoreTest, ASustainedRunWithoutGpuStateStoresNulls) {
  {
    Store store(path_);
    RunRecord run = run_record();
    run.environment.device = Device::cpu();
    store.begin_run(run);
  }
  SQLite::Database db(path_, SQLite::OPEN_READONLY);
  EXPECT_EQ(db.execAndGet("SELECT measure_regime || ' ' || (burst_cooldown_max_ms IS NULL) || (power_limit_w IS NULL) || "
                          "(clock_event_reasons_start IS NULL) || ' ' || env_vars FROM runs").getString(),
            "sustained 111 {}");
}

TEST_F(StoreTest, UnsupportedCaseKeepsItsReasonAndNoMeasurements) {
  Store store(path_);
  const auto run_id = store.begin_run(run_record());
  Case c{0, "sdpa_flash", Shape{1, 1, 1, 8, 8, 8}, Dtype::fp32, true};
  CaseResult r;
  r.status = CaseStatus::unsupported;
  r.error_message = "Expected query, key and value to all be of dtype: {Half, BFloat16}";
  r.device = Device::cuda(0);
  store.add_case(run_id, c, r);
  SQLite::Database db(path_, SQLite::OPEN_READONLY);
  SQLite::Statement row(db, "SELECT status, error_message, kernels_per_forward IS NULL, gpu_time_us_median IS NULL, samples IS NULL FROM cases");
  ASSERT_TRUE(row.executeStep());
  EXPECT_EQ(row.getColumn(0).getString(), "unsupported");
  EXPECT_NE(row.getColumn(1).getString().find("dtype"), std::string::npos);
  EXPECT_EQ(row.getColumn(2).getInt(), 1);
  EXPECT_EQ(row.getColumn(3).getInt(), 1);
  EXPECT_EQ(row.getColumn(4).getInt(), 1);
}

TEST_F(StoreTest, EachCaseIsVisibleToOtherReadersAsSoonAsItIsAdded) {
  Store store(path_);
  const auto run_id = store.begin_run(run_record());
  const auto [c, r] = gpu_case();
  store.add_case(run_id, c, r);
  // The run is still 'running', yet another connection sees the finished case.
  SQLite::Database reader(path_, SQLite::OPEN_READONLY);
  EXPECT_EQ(reader.execAndGet("SELECT count(*) FROM cases").getInt(), 1);
  EXPECT_EQ(reader.execAndGet("SELECT status FROM runs").getString(), "running");
}

TEST_F(StoreTest, ReopeningKeepsEarlierRuns) {
  { Store(path_).begin_run(run_record()); }
  { Store(path_).begin_run(run_record()); }
  SQLite::Database db(path_, SQLite::OPEN_READONLY);
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM runs").getInt(), 2);
}

TEST_F(StoreTest, RefusesANewerSchema) {
  { SQLite::Database db(path_, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE); db.exec("PRAGMA user_version = 99"); }
  try {
    Store store(path_);
    FAIL();
  } catch (const BadInputError& error) {
    EXPECT_NE(std::string(error.what()).find("schema version 99 is newer"), std::string::npos) << error.what();
  }
}

TEST_F(StoreTest, RefusesAForeignSqliteDatabaseAndLeavesItAlone) {
  { SQLite::Database db(path_, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE); db.exec("CREATE TABLE mine (x)"); }
  EXPECT_THROW(Store store(path_), BadInputError);
  SQLite::Database db(path_, SQLite::OPEN_READONLY);
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM sqlite_master").getInt(), 1);
}

TEST_F(StoreTest, RefusesAFileThatIsNotSqlite) {
  { std::ofstream(path_) << "this is not a database, just text that is long enough to have a header........"; }
  try {
    Store store(path_);
    FAIL();
  } catch (const BadInputError& error) {
    EXPECT_NE(std::string(error.what()).find("cannot use as a results database"), std::string::npos) << error.what();
  }
}

// Copies tests/data/schema_vN.db to `path` and checks it really is version N.
void copy_saved_database(int version, const std::string& path) {
  fs::copy_file(ATTNSWEEP_SOURCE_DIR "/tests/data/schema_v" + std::to_string(version) + ".db", path);
  SQLite::Database before(path, SQLite::OPEN_READONLY);
  ASSERT_EQ(before.execAndGet("PRAGMA user_version").getInt(), version);
}

// tests/data/schema_v1.db was written by attnsweep with schema version 1 (two
// cases: naive ok with 3 samples, sdpa_efficient unsupported). Every later
// version must open it, keep every row, and accept the new statuses.
void expect_migrated(const std::string& path, const std::string& run_name);

// What one query of a migrated database must give, as SQLite's text of it ("3", "0.0001").
struct StoredValue {
  const char* query;
  std::string expected;
};

void expect_values(const std::string& path, const std::vector<StoredValue>& values) {
  SQLite::Database db(path, SQLite::OPEN_READONLY);
  for (const StoredValue& value : values) {
    EXPECT_EQ(db.execAndGet(value.query).getString(), value.expected) << value.query;
  }
}

// A database saved by an older attnsweep, tests/data/schema_v<version>.db: the name
// of its run, and what its migration keeps of the columns of its version (and leaves
// empty of later ones) beyond what expect_migrated checks of every version.
struct SavedDatabase {
  int version;
  const char* run_name;
  std::vector<StoredValue> kept;
};

TEST_F(StoreTest, MigratesEverySavedDatabaseKeepingTheColumnsOfItsVersion) {
  const std::string schema_version = std::to_string(kSchemaVersion);
  const SavedDatabase saved_databases[] = {
      {1, "saved-v1", {}},
      // schema_v2.db: the same two cases, written with schema version 2.
      {2, "saved-v2", {{"SELECT count(*) FROM samples WHERE mode = 'eager' AND throttled = 0", "3"}}},
      // schema_v3.db: the same two cases, written with schema version 3. Columns of version 3
      // keep their values; the ones version 4 added are empty for old cases.
      {3, "saved-v3",
       {{"SELECT count(*) FROM cases WHERE variant = 'naive' AND gpu_time_us_median IS NULL "
         "AND cpu_time_us_median > 0 AND samples = 3 AND timing_seconds IS NULL", "1"}}},
      // schema_v4.db: the same two cases, written by the store of schema version 4 (commit
      // 7709c17); version 5 adds the claim columns and the application_id. Columns of version 4
      // keep their values.
      {4, "saved-v4",
       {{"SELECT count(*) FROM cases WHERE variant = 'naive' AND cpu_time_us_median > 0 "
         "AND samples = 3 AND setup_seconds > 0", "1"},
        {"SELECT case_order FROM runs", "plan"}}},
      // schema_v5.db: the same two cases, written by the store of schema version 5 (commit
      // ac574fa); version 6 adds the scale-out columns and tables.
      {5, "saved-v5",
       {{"SELECT count(*) FROM cases WHERE variant = 'naive' AND cpu_time_us_median > 0 "
         "AND samples = 3 AND setup_seconds > 0 AND gpu_uuid IS NULL AND shard_index IS NULL", "1"},
        // A run made before version 6 is no shard and has no uuid; run_devices and merged_shards start empty.
        {"SELECT count(*) FROM runs WHERE run_uuid IS NULL AND shard_count IS NULL", "1"},
        {"SELECT (SELECT count(*) FROM run_devices) + (SELECT count(*) FROM merged_shards)", "0"}}},
      // schema_v6.db: the same two cases as a version 6 database (shard 0 of 1, one run_devices
      // row; made from schema_v5.db with runner/storage/schema.sql of commit 8482970); version 7
      // adds the environment fingerprint, the power regime and the clock event reasons.
      {6, "saved-v6",
       {{"SELECT count(*) FROM runs WHERE shard_index = 0 AND shard_count = 1 AND "
         "run_uuid = '6a1f0c2e-9d7b-4c1e-8f3a-2b5d6e7f8091' AND sweep_id = 'saved-sweep'", "1"},
        // A run made before version 7 was measured sustained and has no fingerprint beyond what it stored.
        {"SELECT measure_regime || '|' || ifnull(power_limit_w, 'null') || '|' || ifnull(env_vars, 'null') FROM runs",
         "sustained|null|null"},
        // The two saved cases and the one expect_migrated added, all of shard 0.
        {"SELECT count(*) FROM cases WHERE power_cap_share IS NULL AND shard_index = 0", "3"},
        {"SELECT count(*) FROM samples WHERE clock_event_reasons IS NULL", "3"},
        {"SELECT count(*) FROM run_devices WHERE shard_index = 0 AND env_vars IS NULL", "1"}}},
      // schema_v7.db: the same two cases as a version 7 database (burst regime, a fingerprint, a
      // trace path as given; made from schema_v6.db with runner/storage/schema.sql of commit
      // 08ff3ad); version 8 stores trace paths relative to the database (trace_path_base).
      {7, "saved-v7",
       {{"SELECT measure_regime || '|' || burst_cooldown_max_ms || '|' || power_limit_w || '|' || env_vars FROM runs",
         "burst|500.0|700.0|{\"CUDA_VISIBLE_DEVICES\":\"0\"}"},
        // Its trace path stays as given, and the run says what it is relative to.
        {"SELECT trace_path_base FROM runs", "working_directory"},
        {"SELECT trace_path FROM cases WHERE variant = 'naive' AND status = 'ok'", "old-traces/run1-0-naive.json"},
        {"SELECT count(*) FROM samples WHERE clock_event_reasons = 4", "3"}}},
      // schema_v8.db: schema_v7.db migrated by attnsweep of commit 349d6b3 (schema 8); version 9
      // adds the numerics verdict, other compute processes and the cool-down allowance: empty
      // for old cases, which keep everything else.
      {8, "saved-v7",
       {{"PRAGMA user_version", schema_version},
        // The two saved cases and the one expect_migrated added (no accuracy check: no verdict).
        {"SELECT count(*) FROM cases WHERE numerics IS NULL AND numerics_bound IS NULL AND "
         "other_processes IS NULL AND cooldown_budget_exhausted IS NULL AND run_id = 1", "3"},
        {"SELECT ifnull(other_processes_start, 'null') FROM runs WHERE run_id = 1", "null"},
        {"SELECT trace_path FROM cases WHERE variant = 'naive' AND status = 'ok' AND run_id = 1",
         "old-traces/run1-0-naive.json"},
        // The results view leaves the verdict of every case empty too.
        {"SELECT (SELECT count(*) FROM results WHERE numerics IS NULL) = "
         "(SELECT count(*) FROM cases WHERE numerics IS NULL)", "1"}}},
      // schema_v9.db: schema_v8.db migrated in place by the Store of main's build (commit
      // 31ad087, schema 9), then its naive case given a numerics verdict and its run
      // other_processes_start 0 with sqlite3, so version 9's own columns have values to keep.
      // Version 10 adds the pass axis: every older case is a forward, with no gradient errors;
      // the results view shows both.
      {9, "saved-v7",
       {// The two saved cases and the one expect_migrated added.
        {"SELECT count(*) FROM cases WHERE pass = 'forward' AND grad_rel_error_q IS NULL AND "
         "grad_rel_error_k IS NULL AND grad_rel_error_v IS NULL AND sdpa_backend_backward IS NULL", "3"},
        {"SELECT numerics || '|' || numerics_bound || '|' || other_processes FROM cases "
         "WHERE variant = 'naive' AND status = 'ok'", "ok|0.0001|0"},
        {"SELECT other_processes_start FROM runs", "0"},
        {"SELECT group_concat(pass || ':' || ifnull(grad_rel_error_v, 'null'), ',') FROM results",
         "forward:null,forward:null,forward:null"}}},
  };
  for (const SavedDatabase& saved : saved_databases) {
    SCOPED_TRACE("schema_v" + std::to_string(saved.version) + ".db");
    const std::string path = scratch_.path("schema_v" + std::to_string(saved.version) + ".db");
    ASSERT_NO_FATAL_FAILURE(copy_saved_database(saved.version, path));
    expect_migrated(path, saved.run_name);
    expect_values(path, saved.kept);
  }
}

// tests/data/schema_v10.db: schema_v9.db with a second run appended by the build of commit 2d5c259
// (schema 10): `attnsweep run` of naive 1x2x16x8 fp32 on the CPU, passes forward and backward, so
// version 10's own columns (pass, grad_rel_error_*) have values to keep. Version 11 adds the validity
// label and the graph checks, and the energy window's columns: NULL for every older case (never judged,
// not "ok"; no energy measured).
TEST_F(StoreTest, MigratesASavedVersionTenDatabase) {
  ASSERT_NO_FATAL_FAILURE(copy_saved_database(10, path_));
  { Store store(path_); }
  expect_values(path_, {
      {"PRAGMA user_version", std::to_string(kSchemaVersion)},
      {"PRAGMA integrity_check", "ok"},
      {"SELECT group_concat(name, ',') FROM (SELECT name FROM runs ORDER BY run_id)", "saved-v7,saved-v10"},
      {"SELECT group_concat(variant || ':' || pass || ':' || status, ',') FROM (SELECT * FROM cases ORDER BY case_id)",
       "naive:forward:ok,sdpa_efficient:forward:unsupported,naive:forward:ok,naive:backward:ok"},
      {"SELECT count(*) FROM cases WHERE validity IS NULL AND validity_reasons IS NULL AND "
       "graph_launches_per_replay IS NULL AND graph_output_rel_diff IS NULL", "4"},
      {"SELECT count(*) FROM results WHERE validity IS NULL", "4"},
      {"SELECT count(*) FROM cases WHERE energy_j IS NULL AND energy_power_w IS NULL AND "
       "energy_window_s IS NULL AND energy_passes IS NULL", "4"},
      {"SELECT count(*) FROM results WHERE energy_j IS NULL AND energy_power_w IS NULL AND tflop_per_joule IS NULL",
       "4"},
      // Version 12 (issue 25): every older causal mask was PyTorch's is_causal (top left), with no window.
      {"SELECT count(*) FROM cases WHERE causal_bottom_right = 0 AND window_left IS NULL AND window_right IS NULL",
       "4"},
      {"SELECT count(*) FROM results WHERE status = 'ok' AND abs(tokens_per_s * time_us_median * 1e-6 "
       "- batch * seq_len_q) < 1e-6 AND abs(us_per_token * batch * seq_len_q - time_us_median) < 1e-9", "3"},
      // Version 16 (issue 36): no older case was soft-capped; 17: none had ALiBi or sinks.
      {"SELECT count(*) FROM cases WHERE softcap IS NULL", "4"},
      {"SELECT count(*) FROM cases WHERE alibi = 0 AND sinks = 0", "4"},
      {"SELECT count(*) FROM results WHERE softcap IS NULL", "4"},
      // Version 15 (issue 36): every older case's values had head_dim.
      {"SELECT count(*) FROM cases WHERE head_dim_v = 0", "4"},
      {"SELECT count(*) FROM results WHERE head_dim_v = head_dim", "4"},
      // Version 14 (issue 35): no older run or case had the replays' own stopping rule.
      {"SELECT count(*) FROM cases WHERE graph_median_ci_rel IS NULL AND graph_stop_reason IS NULL", "4"},
      {"SELECT count(*) FROM runs WHERE graph_target_median_ci IS NULL", "2"},
  });
  SQLite::Database db(path_, SQLite::OPEN_READONLY);
  EXPECT_GT(db.execAndGet("SELECT grad_rel_error_q FROM cases WHERE pass = 'backward'").getDouble(), 0);
  // The results view's mask of an older case is its causal flag's.
  EXPECT_EQ(db.execAndGet("SELECT group_concat(causal || ':' || mask, ',') FROM (SELECT * FROM results ORDER BY case_id)")
                .getString(),
            db.execAndGet("SELECT group_concat(causal || ':' || CASE causal WHEN 1 THEN 'causal' ELSE 'full' END, ',') "
                          "FROM (SELECT * FROM cases ORDER BY case_id)").getString());
}

// Issue 35 (schema 14): the CUDA-graph replays' own stopping rule is stored: the run's
// target, each case's interval and why its replays stopped; a CPU run has no target.
// tests/data/schema_v15.db: written by the build of be21d2b with head_dim_v (issue 36):
// naive and sdpa_math on a 24/8 and an 8 shape, all ok. Version 16 keeps every
// row and value head dim, and no case of it is soft-capped.
TEST_F(StoreTest, MigratesASavedVersionFifteenDatabase) {
  ASSERT_NO_FATAL_FAILURE(copy_saved_database(15, path_));
  { Store store(path_); }
  expect_values(path_, {
      {"PRAGMA user_version", std::to_string(kSchemaVersion)},
      {"PRAGMA integrity_check", "ok"},
      {"SELECT group_concat(variant || ':' || head_dim || '/' || head_dim_v || ':' || status, ',') FROM "
       "(SELECT * FROM cases ORDER BY case_id)",
       "naive:24/8:ok,sdpa_math:24/8:ok,naive:8/0:ok,sdpa_math:8/0:ok"},
      {"SELECT count(*) FROM cases WHERE softcap IS NULL", "4"},
      {"SELECT group_concat(head_dim_v || ':' || ifnull(softcap, 'none'), ',') FROM (SELECT * FROM results ORDER BY "
       "case_id)", "8:none,8:none,8:none,8:none"},
  });
  const auto rows = RunReader(path_).cases(1);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].identity.label(), "naive 1x2x16x24/8 fp32 causal");
  EXPECT_FALSE(rows[0].identity.scores.any());
}

TEST_F(StoreTest, TheGraphReplaysTargetIntervalAndStopReasonAreStored) {
  RunRecord gpu_run = run_record();
  gpu_run.environment.device = Device::cuda(0);
  gpu_run.measure.graph_target_median_ci = 0.004;
  RunRecord cpu_run = run_record();
  cpu_run.environment.device = Device::cpu();
  Store store(path_);
  const auto gpu_id = store.begin_run(gpu_run);
  const auto cpu_id = store.begin_run(cpu_run);
  auto [c, r] = gpu_case();
  r.graph_time_us = summarize({40.0, 40.1, 40.0, 39.9, 40.2, 40.0, 40.1, 39.9, 40.0, 40.1, 40.0});
  r.graph_stop_reason = StopReason::median_ci;
  store.add_case(gpu_id, c, r);
  store.finish_run(gpu_id, RunStatus::done);
  store.finish_run(cpu_id, RunStatus::done);
  SQLite::Database db(path_, SQLite::OPEN_READONLY);
  SQLite::Statement runs(db, "SELECT ifnull(graph_target_median_ci, 'null') FROM runs ORDER BY run_id");
  ASSERT_TRUE(runs.executeStep());
  EXPECT_DOUBLE_EQ(runs.getColumn(0).getDouble(), 0.004);
  ASSERT_TRUE(runs.executeStep());
  EXPECT_EQ(runs.getColumn(0).getString(), "null");
  EXPECT_EQ(db.execAndGet("SELECT graph_stop_reason FROM cases").getString(), "median_ci");
  ASSERT_TRUE(r.graph_time_us->median_ci_rel.has_value());
  EXPECT_GT(*r.graph_time_us->median_ci_rel, 0);
  EXPECT_DOUBLE_EQ(db.execAndGet("SELECT graph_median_ci_rel FROM cases").getDouble(), *r.graph_time_us->median_ci_rel);
  const auto rows = RunReader(path_).cases(gpu_id);
  ASSERT_EQ(rows.size(), 1u);
  ASSERT_TRUE(rows[0].graph_stop_reason.has_value());
  EXPECT_EQ(*rows[0].graph_stop_reason, StopReason::median_ci);
  EXPECT_DOUBLE_EQ(*rows[0].graph_time_us->median_ci_rel, *r.graph_time_us->median_ci_rel);
}

// Issue 36: a value head dim is stored (0 where it is head_dim), read back into the
// same shape, and the results view shows the values' head dim itself.
TEST_F(StoreTest, AValueHeadDimIsStoredAndReadBackAndTheResultsViewShowsIt) {
  Store store(path_);
  const auto run_id = store.begin_run(run_record());
  CaseResult r;
  r.device = Device::cpu();
  const Shape mla{1, 4, 4, 32, 32, 192, {}, {}, 0, 128};
  const Shape equal{1, 4, 4, 32, 32, 64};
  store.add_case(run_id, Case{0, "naive", mla, Dtype::fp32, true}, r);
  store.add_case(run_id, Case{1, "naive", equal, Dtype::fp32, true}, r);
  store.finish_run(run_id, RunStatus::done);
  const auto rows = RunReader(path_).cases(run_id);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].identity.shape, mla);
  EXPECT_EQ(rows[0].identity.shape.label(), "1x4x32x192/128");
  EXPECT_EQ(rows[1].identity.shape, equal);
  SQLite::Database db(path_, SQLite::OPEN_READONLY);
  EXPECT_EQ(db.execAndGet("SELECT group_concat(head_dim_v, ',') FROM (SELECT head_dim_v FROM cases ORDER BY plan_index)")
                .getString(),
            "128,0");
  EXPECT_EQ(db.execAndGet("SELECT group_concat(head_dim || '/' || head_dim_v, ',') FROM "
                          "(SELECT head_dim, head_dim_v FROM results ORDER BY plan_index)")
                .getString(),
            "192/128,64/64");
}

// tests/data/schema_v16.db: written by the build of 0d85523 with softcap (issue 36):
// naive and sdpa_math at softcap none and 30 (sdpa_math's capped case unsupported).
// Version 17 keeps every row and cap, and no case of it has ALiBi or sinks.
TEST_F(StoreTest, MigratesASavedVersionSixteenDatabase) {
  ASSERT_NO_FATAL_FAILURE(copy_saved_database(16, path_));
  { Store store(path_); }
  expect_values(path_, {
      {"PRAGMA user_version", std::to_string(kSchemaVersion)},
      {"PRAGMA integrity_check", "ok"},
      {"SELECT group_concat(variant || ':' || ifnull(softcap, 'none') || ':' || status, ',') FROM "
       "(SELECT * FROM cases ORDER BY case_id)",
       "naive:none:ok,sdpa_math:none:ok,naive:30.0:ok,sdpa_math:30.0:unsupported"},
      {"SELECT count(*) FROM cases WHERE alibi = 0 AND sinks = 0 AND deterministic = 0", "4"},
      {"SELECT group_concat(alibi || sinks || deterministic, ',') FROM (SELECT * FROM results ORDER BY case_id)",
       "000,000,000,000"},
  });
  const auto rows = RunReader(path_).cases(1);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[2].identity.label(), "naive 1x2x16x8 fp32 causal softcap30");
  EXPECT_FALSE(rows[2].identity.scores.alibi || rows[2].identity.scores.sinks);
}

// tests/data/schema_v17.db: written by the build of 1688eb5 on the CPU: naive and
// sdpa_math, fp32, causal, without and with ALiBi. Version 18 keeps every row and
// adds rel_error_dequantized, NULL for them all (none is fp8); fp8 dtypes are allowed.
TEST_F(StoreTest, MigratesASavedVersionSeventeenDatabase) {
  ASSERT_NO_FATAL_FAILURE(copy_saved_database(17, path_));
  { Store store(path_); }
  expect_values(path_, {
      {"PRAGMA user_version", std::to_string(kSchemaVersion)},
      {"PRAGMA integrity_check", "ok"},
      {"SELECT group_concat(variant || ':' || alibi || ':' || dtype || ':' || status, ',') FROM "
       "(SELECT * FROM cases ORDER BY case_id)",
       "naive:0:fp32:ok,sdpa_math:0:fp32:ok,naive:1:fp32:ok,sdpa_math:1:fp32:ok"},
      {"SELECT count(*) FROM cases WHERE rel_error IS NOT NULL AND rel_error_dequantized IS NULL", "4"},
      {"SELECT count(*) FROM results WHERE rel_error_dequantized IS NULL", "4"},
  });
  SQLite::Database writable(path_, SQLite::OPEN_READWRITE);
  writable.exec("UPDATE cases SET dtype = 'fp8_e4m3' WHERE case_id = 1");
  EXPECT_THROW(writable.exec("UPDATE cases SET dtype = 'fp8' WHERE case_id = 1"), SQLite::Exception);
}

// tests/data/schema_v18.db: written by the build of c61a358 on the CPU: naive and
// sdpa_math, fp32 and fp8_e4m3 (sdpa_math unsupported there), causal. Version 19
// keeps every row, adds the claims table (empty) and the views claim_results and
// choice, and the results view's claim columns (NULL).
TEST_F(StoreTest, MigratesASavedVersionEighteenDatabase) {
  ASSERT_NO_FATAL_FAILURE(copy_saved_database(18, path_));
  { Store store(path_); }
  expect_values(path_, {
      {"PRAGMA user_version", std::to_string(kSchemaVersion)},
      {"PRAGMA integrity_check", "ok"},
      {"SELECT group_concat(variant || ':' || dtype || ':' || status, ',') FROM (SELECT * FROM cases ORDER BY case_id)",
       "naive:fp32:ok,sdpa_math:fp32:ok,naive:fp8_e4m3:ok,sdpa_math:fp8_e4m3:unsupported"},
      {"SELECT count(*) FROM cases WHERE dtype = 'fp8_e4m3' AND rel_error_dequantized IS NOT NULL", "1"},
      {"SELECT count(*) FROM claims", "0"},
      {"SELECT count(*) FROM results WHERE claim_ratio IS NULL AND claimed_tflops IS NULL", "4"},
      {"SELECT group_concat(fastest_variant || ':' || variants_timed, ',') FROM (SELECT * FROM choice ORDER BY fastest_case_id)",
       "naive:2,naive:1"},
  });
}

// tests/data/schema_v19.db: written by the build of 5e8a790 on the CPU from a config with
// claims (tests/data's claims below): naive, sdpa_math and sdpa_auto, fp32 causal 1x2x64x16,
// two claims matched. Version 20 keeps every row and the claims, and recreates the choice
// view, whose auto_verdict gains 'faster' (PyTorch's choice faster than every variant timed,
// intervals apart: version 19 called that 'fastest', or a tie with a negative share).
TEST_F(StoreTest, MigratesASavedVersionNineteenDatabase) {
  ASSERT_NO_FATAL_FAILURE(copy_saved_database(19, path_));
  { Store store(path_); }
  expect_values(path_, {
      {"PRAGMA user_version", std::to_string(kSchemaVersion)},
      {"PRAGMA integrity_check", "ok"},
      {"SELECT group_concat(variant || ':' || status, ',') FROM (SELECT * FROM cases ORDER BY case_id)",
       "naive:ok,sdpa_math:ok,sdpa_auto:ok"},
      {"SELECT group_concat(name || ':' || plan_index, ',') FROM (SELECT * FROM claims ORDER BY claim_id)",
       "naive-64:0,auto-64:2"},
      {"SELECT count(*) FROM results WHERE claim_ratio IS NOT NULL", "2"},
  });
  // The recreated view: PyTorch's choice 3x faster than the fastest pinned variant, intervals apart.
  SQLite::Database writable(path_, SQLite::OPEN_READWRITE);
  writable.exec("UPDATE cases SET gpu_time_us_median = NULL, cpu_time_us_median = CASE variant WHEN 'naive' THEN 300 "
                "WHEN 'sdpa_math' THEN 400 ELSE 100 END, median_ci_rel = 0.01");
  EXPECT_EQ(writable.execAndGet("SELECT fastest_variant || ':' || auto_verdict FROM choice").getString(), "naive:faster");
}

// tests/data/schema_v20.db: written by the build of cbe5670 on the CPU (naive and sdpa_math,
// fp32 causal 1x2x64x16), then given one kernels row with sqlite3 (a CPU run has none), so that
// the kernels table's migration is seen. Version 21 (issue 39) adds the hardware counters: NULL
// for every older case and kernel, and the results view's derived columns NULL with them.
TEST_F(StoreTest, MigratesASavedVersionTwentyDatabase) {
  ASSERT_NO_FATAL_FAILURE(copy_saved_database(20, path_));
  { Store store(path_); }
  expect_values(path_, {
      {"PRAGMA user_version", std::to_string(kSchemaVersion)},
      {"PRAGMA integrity_check", "ok"},
      {"SELECT group_concat(variant || ':' || status, ',') FROM (SELECT * FROM cases ORDER BY case_id)",
       "naive:ok,sdpa_math:ok"},
      {"SELECT count(*) FROM cases WHERE dram_read_bytes IS NULL AND dram_write_bytes IS NULL AND l2_hit_rate IS NULL "
       "AND sm_throughput IS NULL AND tensor_pipe IS NULL AND counter_launches IS NULL AND counters_why_not IS NULL", "2"},
      {"SELECT name || ':' || total_us || ':' || ifnull(dram_read_bytes, 'null') FROM kernels", "flash_fwd_kernel:10.5:null"},
      {"SELECT count(*) FROM results WHERE dram_bandwidth_gbps IS NULL AND bytes_over_min IS NULL "
       "AND dram_bandwidth_share IS NULL", "2"},
  });
}

// tests/data/schema_v21.db: written by the build of 845b576 on the CPU (naive and sdpa_math,
// fp32 causal 1x2x64x16). Version 22 (issue 38) adds runs.op_libraries: NULL for the older run,
// which declared no op library; a run that did keeps its builds as given.
TEST_F(StoreTest, MigratesASavedVersionTwentyOneDatabase) {
  ASSERT_NO_FATAL_FAILURE(copy_saved_database(21, path_));
  {
    Store store(path_);
    auto record = run_record();
    record.op_libraries = R"({"fa3":"0123456789abcdef"})";
    store.begin_run(record);
  }
  expect_values(path_, {
      {"PRAGMA user_version", std::to_string(kSchemaVersion)},
      {"PRAGMA integrity_check", "ok"},
      {"SELECT group_concat(variant || ':' || status, ',') FROM (SELECT * FROM cases ORDER BY case_id)",
       "naive:ok,sdpa_math:ok"},
      {"SELECT group_concat(run_id || ':' || ifnull(op_libraries, 'null'), ' ') FROM runs",
       R"(1:null 2:{"fa3":"0123456789abcdef"})"},
      {"SELECT json_extract(op_libraries, '$.fa3') FROM runs WHERE run_id = 2", "0123456789abcdef"},
  });
  const RunReader reader(path_);
  ASSERT_TRUE(reader.run(2).has_value());
  EXPECT_EQ(reader.run(2)->op_libraries, R"({"fa3":"0123456789abcdef"})");
  EXPECT_EQ(reader.run(1)->op_libraries, "");
}

// Issue 39: the counter pass's figures are stored per case and per kernel, read back as they
// were, and the results view derives the bandwidth and the bytes over the minimum from them.
TEST_F(StoreTest, HardwareCountersAreStoredPerCaseAndPerKernelAndDerivedInTheResults) {
  std::int64_t case_id = 0;
  {
    Store store(path_);
    const auto run_id = store.begin_run(run_record());
    auto [c, r] = gpu_case();
    attnsweep::testing::read_counters(r);
    r.profile->kernels[0].dram_read_bytes = 50.35e6;
    r.profile->kernels[0].tensor_pipe = 0.75;
    case_id = store.add_case(run_id, c, r).value();
    // A case where counters were asked for but not read keeps the reason.
    auto [c2, r2] = gpu_case();
    c2.plan_index = 4;  // read back after the first (plan order)
    r2.counters_why_not = "GPU performance counters are restricted to administrators on this machine";
    store.add_case(run_id, c2, r2);
    store.finish_run(run_id, RunStatus::done);
  }
  const RunReader reader(path_);
  const auto rows = reader.cases(1);
  ASSERT_EQ(rows.size(), 2u);
  ASSERT_TRUE(rows[0].dram_read_bytes.has_value());
  EXPECT_DOUBLE_EQ(*rows[0].dram_read_bytes, 50.35e6);
  EXPECT_DOUBLE_EQ(*rows[0].dram_write_bytes, 8.72e6);
  EXPECT_DOUBLE_EQ(*rows[0].l2_hit_rate, 0.25);
  EXPECT_DOUBLE_EQ(*rows[0].tensor_pipe, 0.75);
  EXPECT_EQ(rows[0].counter_launches, 1);
  EXPECT_EQ(rows[0].counter_replay_passes, 3);
  EXPECT_TRUE(rows[0].counters_why_not.empty());
  EXPECT_FALSE(rows[1].dram_read_bytes.has_value());
  EXPECT_EQ(rows[1].counters_why_not, "GPU performance counters are restricted to administrators on this machine");
  const auto kernels = reader.kernels(case_id);
  ASSERT_EQ(kernels.size(), 2u);
  EXPECT_DOUBLE_EQ(*kernels[0].dram_read_bytes, 50.35e6);
  EXPECT_DOUBLE_EQ(*kernels[0].tensor_pipe, 0.75);
  EXPECT_FALSE(kernels[0].dram_write_bytes.has_value());
  EXPECT_FALSE(kernels[1].dram_read_bytes.has_value());
  {
    // The share of the copy ceiling: 59.07 MB over the median, over a planted 4000 GB/s ceiling.
    SQLite::Database writable(path_, SQLite::OPEN_READWRITE);
    writable.exec("UPDATE runs SET ceiling_copy_gbps = 4000");
    EXPECT_EQ(writable.execAndGet("SELECT printf('%.6f', dram_bandwidth_share * 4000 * time_us_median * 1e3 / 59.07e6) "
                                  "FROM results WHERE case_id = " + std::to_string(case_id))
                  .getString(),
              "1.000000");
  }
  SQLite::Database db(path_, SQLite::OPEN_READONLY);
  // 59.07 MB over the median (the case's samples: 82 us) and over min_bytes.
  EXPECT_EQ(db.execAndGet("SELECT printf('%.1f|%.4f', dram_bandwidth_gbps, bytes_over_min / ((dram_read_bytes + "
                          "dram_write_bytes) / (SELECT min_bytes FROM cases WHERE case_id = " +
                          std::to_string(case_id) + "))) FROM results WHERE case_id = " + std::to_string(case_id))
                .getString(),
            db.execAndGet("SELECT printf('%.1f|1.0000', 59.07e6 / (time_us_median * 1e3)) FROM results WHERE case_id = " +
                          std::to_string(case_id))
                .getString());
}

// Issue 36: an fp8 case's dtype and its second error are stored and read back.
TEST_F(StoreTest, AnFp8CaseKeepsItsDtypeAndItsErrorAgainstTheDequantisedInputs) {
  Store store(path_);
  const auto run_id = store.begin_run(run_record());
  CaseResult r;
  r.device = Device::cpu();
  r.rel_error = 0.04;
  r.rel_error_dequantized = 0.003;
  const Shape shape{1, 4, 4, 32, 32, 16};
  store.add_case(run_id, Case{0, "naive", shape, Dtype::fp8_e5m2, true}, r);
  store.finish_run(run_id, RunStatus::done);
  const auto rows = RunReader(path_).cases(run_id);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].identity.dtype, Dtype::fp8_e5m2);
  ASSERT_TRUE(rows[0].rel_error_dequantized.has_value());
  EXPECT_DOUBLE_EQ(*rows[0].rel_error_dequantized, 0.003);
  EXPECT_EQ(rows[0].identity.label(), "naive 1x4x32x16 fp8_e5m2 causal");
  SQLite::Database db(path_, SQLite::OPEN_READONLY);
  EXPECT_EQ(db.execAndGet("SELECT dtype || ' ' || rel_error || ' ' || rel_error_dequantized FROM results").getString(),
            "fp8_e5m2 0.04 0.003");
}

// Issue 36: ALiBi and sinks are stored (0 or 1), read back into the same case,
// each another measurement; the schema and the reader refuse any other value.
TEST_F(StoreTest, AlibiAndSinksAreStoredAndReadBackAndNameAnotherMeasurement) {
  Store store(path_);
  const auto run_id = store.begin_run(run_record());
  CaseResult r;
  r.device = Device::cpu();
  const Shape shape{1, 4, 4, 32, 32, 16};
  Case both{0, "naive", shape, Dtype::fp32, true};
  both.scores.alibi = true;
  both.scores.sinks = true;
  Case alibi{1, "naive", shape, Dtype::fp32, true};
  alibi.scores.alibi = true;
  alibi.deterministic = true;
  store.add_case(run_id, both, r);
  store.add_case(run_id, alibi, r);
  store.add_case(run_id, Case{2, "naive", shape, Dtype::fp32, true}, r);
  store.finish_run(run_id, RunStatus::done);
  const auto rows = RunReader(path_).cases(run_id);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_TRUE(rows[0].identity.same_measurement(both));
  EXPECT_TRUE(rows[1].identity.same_measurement(alibi));
  EXPECT_FALSE(rows[0].identity.same_measurement(rows[1].identity));
  EXPECT_FALSE(rows[2].identity.scores.any());
  EXPECT_EQ(rows[0].identity.label(), "naive 1x4x32x16 fp32 causal alibi sinks");
  SQLite::Database db(path_, SQLite::OPEN_READONLY);
  EXPECT_EQ(db.execAndGet("SELECT group_concat(alibi || ':' || sinks || ':' || deterministic, ',') FROM (SELECT * FROM "
                          "results ORDER BY plan_index)").getString(),
            "1:1:0,1:0:1,0:0:0");
  EXPECT_TRUE(rows[1].identity.deterministic);
  EXPECT_EQ(rows[1].identity.label(), "naive 1x4x32x16 fp32 causal alibi deterministic");
  SQLite::Database writable(path_, SQLite::OPEN_READWRITE);
  EXPECT_THROW(writable.exec("UPDATE cases SET sinks = 2 WHERE plan_index = 0"), SQLite::Exception);
}

// Issue 36: a softcap is stored (NULL for none), read back into the same case,
// and a case of another cap is another measurement.
TEST_F(StoreTest, ASoftcapIsStoredAndReadBackAndNamesAnotherMeasurement) {
  Store store(path_);
  const auto run_id = store.begin_run(run_record());
  CaseResult r;
  r.device = Device::cpu();
  const Shape shape{1, 4, 4, 32, 32, 16};
  Case capped{0, "naive", shape, Dtype::fp32, true};
  capped.scores.softcap = 12.5;
  store.add_case(run_id, capped, r);
  store.add_case(run_id, Case{1, "naive", shape, Dtype::fp32, true}, r);
  store.finish_run(run_id, RunStatus::done);
  const auto rows = RunReader(path_).cases(run_id);
  ASSERT_EQ(rows.size(), 2u);
  ASSERT_TRUE(rows[0].identity.scores.softcap.has_value());
  EXPECT_DOUBLE_EQ(*rows[0].identity.scores.softcap, 12.5);
  EXPECT_TRUE(rows[0].identity.same_measurement(capped));
  EXPECT_FALSE(rows[1].identity.scores.any());
  EXPECT_FALSE(rows[0].identity.same_measurement(rows[1].identity));
  EXPECT_EQ(rows[0].identity.label(), "naive 1x4x32x16 fp32 causal softcap12.5");
  SQLite::Database db(path_, SQLite::OPEN_READONLY);
  EXPECT_EQ(db.execAndGet("SELECT group_concat(ifnull(softcap, 'none'), ',') FROM (SELECT softcap FROM results ORDER BY "
                          "plan_index)").getString(),
            "12.5,none");
  // The schema refuses a cap that is no cap.
  SQLite::Database writable(path_, SQLite::OPEN_READWRITE);
  EXPECT_THROW(writable.exec("UPDATE cases SET softcap = 0 WHERE plan_index = 0"), SQLite::Exception);
}

// Issue 25: a serving mask is stored in three columns and read back as it was.
TEST_F(StoreTest, ServingMasksAreStoredAndReadBack) {
  Store store(path_);
  const auto run_id = store.begin_run(run_record());
  CaseResult r;
  r.device = Device::cpu();
  const Shape shape{1, 4, 2, 4, 64, 16};
  const std::vector<Mask> masks = {Mask(true), Mask(false), Mask(CausalAlignment::bottom_right, std::nullopt, std::nullopt),
                                   Mask(CausalAlignment::bottom_right, 16, 0), Mask(CausalAlignment::none, 8, 4),
                                   Mask(CausalAlignment::none, std::nullopt, 2)};
  for (std::size_t i = 0; i < masks.size(); ++i) {
    store.add_case(run_id, Case{static_cast<int>(i), "naive", shape, Dtype::fp32, masks[i]}, r);
  }
  store.finish_run(run_id, RunStatus::done);
  const auto rows = RunReader(path_).cases(run_id);
  ASSERT_EQ(rows.size(), masks.size());
  for (std::size_t i = 0; i < masks.size(); ++i) EXPECT_EQ(rows[i].identity.mask, masks[i]) << masks[i].label();
  SQLite::Database db(path_, SQLite::OPEN_READONLY);
  EXPECT_EQ(db.execAndGet("SELECT group_concat(mask, '|') FROM (SELECT mask FROM results ORDER BY plan_index)").getString(),
            "causal|full|causal_bottom_right|causal_bottom_right window[16,0]|window[8,4]|window[inf,2]");
}

// A value the typed API cannot write: the schema's CHECK refuses `sql`, which would store `what`.
void expect_refused_by_a_check(SQLite::Database& db, const std::string& sql, const std::string& what) {
  try {
    db.exec(sql);
    ADD_FAILURE() << "the schema accepted " << what;
  } catch (const SQLite::Exception& error) {
    EXPECT_NE(std::string(error.what()).find("CHECK constraint"), std::string::npos) << error.what();
  }
}

TEST_F(StoreTest, TheValidityLabelIsStoredWithItsReasonsAndTheSchemaRefusesAnotherLabel) {
  Store store(path_);
  const auto run_id = store.begin_run(run_record());
  CaseResult r;
  r.device = Device::cpu();
  r.validity = "suspect";
  r.validity_reasons = {{ValidityCode::few_samples, "4 kept sample(s), under min_samples 10"},
                        {ValidityCode::shared_gpu, "1 other"}};
  r.graph_launches_per_replay = 3;
  r.graph_output_rel_diff = std::numeric_limits<double>::quiet_NaN();  // not finite: NULL
  store.add_case(run_id, Case{0, "naive", Shape{1, 1, 1, 8, 8, 8}, Dtype::fp32, true}, r);
  SQLite::Database db(path_, SQLite::OPEN_READWRITE);
  EXPECT_EQ(db.execAndGet("SELECT validity || '|' || validity_reasons || '|' || graph_launches_per_replay || '|' || "
                          "ifnull(graph_output_rel_diff, 'null') FROM cases").getString(),
            "suspect|few_samples: 4 kept sample(s), under min_samples 10; shared_gpu: 1 other|3|null");
  expect_refused_by_a_check(db, "UPDATE cases SET validity = 'fine'", "validity 'fine'");
}

TEST_F(StoreTest, ThePassIsStoredAndTheSchemaRefusesAnUnknownOne) {
  Store store(path_);
  const auto run_id = store.begin_run(run_record());
  Case c{0, "naive", Shape{1, 1, 1, 8, 8, 8}, Dtype::fp32, true};
  c.pass = Pass::forward_backward;
  CaseResult r;
  r.device = Device::cpu();
  r.status = CaseStatus::unsupported;
  store.add_case(run_id, c, r);
  SQLite::Database db(path_, SQLite::OPEN_READWRITE);
  EXPECT_EQ(db.execAndGet("SELECT pass FROM cases").getString(), "forward_backward");
  // A row written without a pass (as by a tool of an older version) is a forward.
  db.exec("INSERT INTO cases (run_id, plan_index, variant, batch, heads, kv_heads, seq_len_q, seq_len_kv, head_dim, "
          "dtype, causal, device, status, flops, min_bytes, finished_at) "
          "VALUES (" + std::to_string(run_id) + ", 1, 'naive', 1, 1, 1, 8, 8, 8, 'fp32', 1, 'cpu', 'ok', 0, 0, 'now')");
  EXPECT_EQ(db.execAndGet("SELECT pass FROM cases WHERE plan_index = 1").getString(), "forward");
  expect_refused_by_a_check(db, "UPDATE cases SET pass = 'fwd' WHERE plan_index = 1", "pass 'fwd'");
}

TEST_F(StoreTest, TracePathsAreStoredRelativeToTheDatabaseAndAResumedOldRunKeepsItsOwn) {
  const fs::path folder = fs::path(path_).parent_path();
  Store store(path_);
  const auto run_id = store.begin_run(run_record());
  const Shape shape{1, 1, 1, 8, 8, 8};
  CaseResult r;
  r.device = Device::cpu();
  r.trace_path = (folder / "results-traces" / "run1-0.json").string();  // absolute, as --traces /abs gives
  store.add_case(run_id, Case{0, "naive", shape, Dtype::fp32, false}, r);
  r.trace_path = (folder.parent_path() / "elsewhere" / "run1-1.json").string();
  store.add_case(run_id, Case{1, "naive", shape, Dtype::fp32, true}, r);
  r.trace_path = "";
  store.add_case(run_id, Case{2, "sdpa_math", shape, Dtype::fp32, true}, r);
  SQLite::Database db(path_, SQLite::OPEN_READWRITE);
  EXPECT_EQ(db.execAndGet("SELECT trace_path_base FROM runs").getString(), "database");
  EXPECT_EQ(db.execAndGet("SELECT group_concat(ifnull(trace_path, 'NULL'), ',') FROM (SELECT * FROM cases ORDER BY plan_index)")
                .getString(),
            "results-traces/run1-0.json,../elsewhere/run1-1.json,NULL");
  // A run made before schema 8 (as a migrated one reads) keeps storing paths as given.
  db.exec("UPDATE runs SET trace_path_base = 'working_directory'");
  r.trace_path = "traces/run1-3.json";
  store.add_case(run_id, Case{3, "sdpa_math", shape, Dtype::fp32, false}, r);
  EXPECT_EQ(db.execAndGet("SELECT trace_path FROM cases WHERE plan_index = 3").getString(), "traces/run1-3.json");
}

void expect_migrated(const std::string& path_, const std::string& run_name) {
  {
    Store store(path_);
    const Shape shape{8, 16, 16, 1024, 1024, 64};
    CaseResult crashed;
    crashed.status = CaseStatus::crashed;
    crashed.error_message = "worker killed by signal 6 (Aborted)";
    crashed.device = Device::cpu();
    store.add_case(1, Case{5, "naive", shape, Dtype::bf16, true}, crashed);
  }
  SQLite::Database db(path_, SQLite::OPEN_READONLY);
  EXPECT_EQ(db.execAndGet("PRAGMA user_version").getInt(), kSchemaVersion);
  EXPECT_EQ(db.execAndGet("PRAGMA application_id").getInt(), kApplicationId);  // recognised by its tables, then marked
  EXPECT_EQ(db.execAndGet("PRAGMA integrity_check").getString(), "ok");
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM pragma_foreign_key_check").getInt(), 0);
  EXPECT_EQ(db.execAndGet("SELECT name FROM runs").getString(), run_name);
  EXPECT_EQ(db.execAndGet("SELECT isolate FROM runs").getInt(), 0);
  EXPECT_TRUE(db.execAndGet("SELECT case_timeout_s FROM runs").isNull());
  EXPECT_EQ(db.execAndGet("SELECT group_concat(variant || ':' || status, ',') FROM (SELECT * FROM cases ORDER BY case_id)").getString(),
            "naive:ok,sdpa_efficient:unsupported,naive:crashed");
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM samples").getInt(), 3);
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM samples JOIN cases USING (case_id) WHERE variant = 'naive'").getInt(), 3);
  EXPECT_GT(db.execAndGet("SELECT count(*) FROM ops").getInt(), 0);
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM results").getInt(), 3);
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM sqlite_master WHERE name LIKE '%_old'").getInt(), 0);
  EXPECT_TRUE(db.execAndGet("SELECT ceiling_bf16_tflops FROM runs").isNull());
  // A run of an older version has no claim: a --resume may take it.
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM runs WHERE owner_pid IS NULL AND owner_host IS NULL "
                          "AND claimed_at IS NULL AND heartbeat_at IS NULL").getInt(), 1);
}

TEST_F(StoreTest, NewStatusesAreAcceptedAndUnknownOnesRefusedByTheSchema) {
  Store store(path_);
  const auto run_id = store.begin_run(run_record());
  Case c{0, "naive", Shape{1, 1, 1, 8, 8, 8}, Dtype::fp32, true};
  CaseResult r;
  r.device = Device::cpu();
  r.status = CaseStatus::timeout;
  store.add_case(run_id, c, r);
  // The typed API cannot spell an unknown status: the schema's CHECK is tested with raw SQL.
  SQLite::Database db(path_, SQLite::OPEN_READWRITE);
  SQLite::Statement exploded(db, "INSERT INTO cases (run_id, plan_index, variant, batch, heads, kv_heads, seq_len_q, "
                                 "seq_len_kv, head_dim, dtype, causal, device, status, flops, min_bytes, finished_at) "
                                 "VALUES (?, 1, 'naive', 1, 1, 1, 8, 8, 8, 'fp32', 1, 'cpu', 'exploded', 0, 0, ?)");
  exploded.bind(1, run_id);
  exploded.bind(2, utc_now_iso8601());
  try {
    exploded.exec();
    ADD_FAILURE() << "the schema accepted status 'exploded'";
  } catch (const SQLite::Exception& error) {
    EXPECT_NE(std::string(error.what()).find("CHECK constraint"), std::string::npos) << error.what();
  }
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM cases").getInt(), 1);  // the refused case left nothing behind
  EXPECT_EQ(db.execAndGet("SELECT status FROM cases").getString(), "timeout");
}

TEST_F(StoreTest, TheSameCaseOfARunIsStoredOnlyOnce) {
  Store store(path_);
  const auto run_id = store.begin_run(run_record());
  const auto [c, r] = gpu_case();
  EXPECT_TRUE(store.add_case(run_id, c, r).has_value());
  // The second time it is "already stored": not an error, and nothing more is written.
  EXPECT_FALSE(store.add_case(run_id, c, r).has_value());
  SQLite::Database db(path_, SQLite::OPEN_READONLY);
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM cases").getInt(), 1);
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM samples").getInt(), 5);
}

// The tables the store writes and the reader reads back as they are: their
// field lists cover every column of the schema, in its order.
TEST_F(StoreTest, DetailTableFieldListsNameEverySchemaColumn) {
  { Store store(path_); }
  SQLite::Database db(path_, SQLite::OPEN_READONLY);
  auto schema_columns = [&](const std::string& table) {
    std::vector<std::string> columns;
    SQLite::Statement info(db, "SELECT name FROM pragma_table_info(?) ORDER BY cid");
    info.bind(1, table);
    while (info.executeStep()) columns.push_back(info.getColumn(0).getString());
    return columns;
  };
  auto field_columns = [](const auto& table) {
    std::vector<std::string> columns = table.keys;
    for (const auto& field : table.fields) columns.push_back(field.column);
    return columns;
  };
  auto in_schema_order = [](std::vector<std::string> columns, const std::vector<std::string>& schema) {
    std::sort(columns.begin(), columns.end(), [&](const std::string& a, const std::string& b) {
      return std::find(schema.begin(), schema.end(), a) < std::find(schema.begin(), schema.end(), b);
    });
    return columns;
  };
  EXPECT_EQ(field_columns(fields::kernels_table()), schema_columns("kernels"));
  EXPECT_EQ(field_columns(fields::ops_table()), schema_columns("ops"));
  // samples: the keys come first; the schema has sample_index second and mode later.
  EXPECT_EQ(in_schema_order(field_columns(fields::samples_table()), schema_columns("samples")), schema_columns("samples"));
}

// ---- what a file must be before anything is written to it (issue 10) ----------

std::string file_bytes(const std::string& path) {
  if (!fs::is_regular_file(path)) return "(not a regular file)";
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Opening `path` throws a BadInputError whose one-line message starts with the
// path and holds `reason`; the file is byte-identical afterwards, with no
// rollback journal and no WAL content beside it.
void expect_refused_untouched(const std::string& path, const std::string& reason,
                              Store::Open mode = Store::Open::create_if_absent) {
  const std::string before = file_bytes(path);
  try {
    Store store(path, mode);
    ADD_FAILURE() << "opened " << path;
  } catch (const BadInputError& error) {
    const std::string message = error.what();
    EXPECT_EQ(message.rfind(path + ": ", 0), 0u) << message;
    EXPECT_NE(message.find(reason), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
  EXPECT_EQ(file_bytes(path), before) << path << " changed";
  EXPECT_FALSE(fs::exists(path + "-journal"));
  // Reading a database in WAL mode (attnsweep's) makes SQLite create -wal and -shm
  // beside it, as any reader does; a refusal writes nothing into them.
  EXPECT_TRUE(!fs::exists(path + "-wal") || fs::file_size(path + "-wal") == 0);
}

// The issue's reproduction: another program's file whose user_version happens
// to be one attnsweep has used was migrated (and switched to WAL) at version 1,
// and failed later at version 4, also switched.
TEST_F(StoreTest, RefusesAForeignFileWhateverItsUserVersionAndLeavesItByteIdentical) {
  for (const int version : {0, 1, 4, kSchemaVersion}) {
    SCOPED_TRACE("user_version " + std::to_string(version));
    const std::string path = scratch_.path("notes-v" + std::to_string(version) + ".db");
    {
      SQLite::Database db(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
      db.exec("CREATE TABLE notes (t); INSERT INTO notes VALUES ('mine'); PRAGMA user_version = " +
              std::to_string(version));
    }
    expect_refused_untouched(path, "not an attnsweep results database");
  }
  // Before version 5 a database is recognised by its tables; the message says what is missing.
  expect_refused_untouched(scratch_.path("notes-v1.db"), "(user_version 1 but no table 'runs')");
}

TEST_F(StoreTest, RefusesAnotherProgramsApplicationIdEvenWithAttnsweepTables) {
  ASSERT_NO_FATAL_FAILURE(copy_saved_database(4, path_));
  { SQLite::Database db(path_, SQLite::OPEN_READWRITE); db.exec("PRAGMA application_id = 305419896"); }
  expect_refused_untouched(path_, "application_id 0x12345678 is another program's");
}

TEST_F(StoreTest, AnOlderDatabaseWithoutATableOfEveryVersionIsRefused) {
  ASSERT_NO_FATAL_FAILURE(copy_saved_database(3, path_));
  { SQLite::Database db(path_, SQLite::OPEN_READWRITE); db.exec("DROP VIEW results; DROP TABLE samples"); }
  expect_refused_untouched(path_, "(user_version 3 but no table 'samples')");
}

TEST_F(StoreTest, ANewerSchemaIsRefusedBeforeAnythingIsWritten) {
  ASSERT_NO_FATAL_FAILURE(copy_saved_database(4, path_));
  {
    SQLite::Database db(path_, SQLite::OPEN_READWRITE);
    db.exec("PRAGMA application_id = " + std::to_string(kApplicationId) + "; PRAGMA user_version = " +
            std::to_string(kSchemaVersion + 1));
  }
  expect_refused_untouched(path_, "schema version " + std::to_string(kSchemaVersion + 1) + " is newer");
}

TEST_F(StoreTest, AnEmptyFileIsANewDatabase) {
  scratch_.write("results.db", "");
  { Store store(path_); }
  SQLite::Database db(path_, SQLite::OPEN_READONLY);
  EXPECT_EQ(db.execAndGet("PRAGMA user_version").getInt(), kSchemaVersion);
  EXPECT_EQ(db.execAndGet("PRAGMA application_id").getInt(), kApplicationId);
}

// A user's own table in a results database survives a migration untouched.
TEST_F(StoreTest, MigrationLeavesAUsersOwnTablesAlone) {
  ASSERT_NO_FATAL_FAILURE(copy_saved_database(3, path_));
  { SQLite::Database db(path_, SQLite::OPEN_READWRITE); db.exec("CREATE TABLE my_notes (case_id, note); INSERT INTO my_notes VALUES (1, 'slow')"); }
  { Store store(path_); }
  SQLite::Database db(path_, SQLite::OPEN_READONLY);
  EXPECT_EQ(db.execAndGet("PRAGMA user_version").getInt(), kSchemaVersion);
  EXPECT_EQ(db.execAndGet("SELECT note FROM my_notes WHERE case_id = 1").getString(), "slow");
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM cases").getInt(), 2);
}

// Issue 33, item 9: opening an existing database writes nothing (not the
// journal mode, not a migration) until the first write; a refused claim rolls
// the migration of an older database back with it.
TEST_F(StoreTest, AnOlderDatabaseIsMigratedOnlyByAWriteThatIsNotRefused) {
  ASSERT_NO_FATAL_FAILURE(copy_saved_database(7, path_));  // rollback journal mode: WAL would change its header
  const auto bytes = [&] {
    std::ifstream file(path_, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(file), {});
  };
  const std::string before = bytes();
  {
    Store store(path_, Store::Open::existing);
    EXPECT_THROW(store.claim_run(7), BadInputError);  // no run 7
  }
  EXPECT_EQ(bytes(), before);
  {
    Store store(path_, Store::Open::existing);
    store.claim_run(1);
  }
  SQLite::Database db(path_, SQLite::OPEN_READONLY);
  EXPECT_EQ(db.execAndGet("PRAGMA user_version").getInt(), kSchemaVersion);
  EXPECT_EQ(db.execAndGet("PRAGMA journal_mode").getString(), "wal");
  EXPECT_EQ(db.execAndGet("SELECT status FROM runs WHERE run_id = 1").getString(), "running");
}

// Issue 33, item 14: a lock held past the busy timeout mid-run names the file,
// the reason and how to go on. Before: "database is locked".
TEST_F(StoreTest, AWriteOfARunUnderALockSaysHowToGoOn) {
  Store store(path_);
  const auto run_id = store.begin_run(run_record());
  SQLite::Database holder(path_, SQLite::OPEN_READWRITE);
  holder.exec("BEGIN EXCLUSIVE");
  try {
    store.heartbeat(run_id);
    ADD_FAILURE() << "wrote under another process's exclusive lock";
  } catch (const DatabaseWriteError& error) {
    EXPECT_EQ(std::string(error.what()),
              path_ + ": database is locked: another process has held it for 10 s (a `sqlite3` shell, another "
                      "attnsweep); close it and continue run 1 with --resume 1 (the cases stored so far are kept)");
  }
  holder.exec("ROLLBACK");
  EXPECT_TRUE(store.heartbeat(run_id));
}

// --resume must not create the database it was told to continue in.
TEST_F(StoreTest, OpeningAnExistingDatabaseNeverCreatesOne) {
  try {
    Store store(path_, Store::Open::existing);
    ADD_FAILURE() << "opened an absent database";
  } catch (const BadInputError& error) {
    EXPECT_EQ(std::string(error.what()), path_ + ": database not found");
  }
  EXPECT_FALSE(fs::exists(path_));
  scratch_.write("results.db", "");
  expect_refused_untouched(path_, ": database not found (the file is empty)", Store::Open::existing);
  EXPECT_EQ(fs::file_size(path_), 0u);
  fs::remove(path_);
  EXPECT_THROW(Store(path_, Store::Open::existing_without_quick_check), BadInputError);
  EXPECT_FALSE(fs::exists(path_));
  { Store(path_).begin_run(run_record()); }
  Store existing(path_, Store::Open::existing);
  EXPECT_EQ(existing.begin_run(run_record()), 2);
}

TEST_F(StoreTest, RefusesAPathThatIsNotARegularFile) {
  // /dev/null used to get a /dev/null-journal beside it.
  const bool journal_was_there = fs::exists("/dev/null-journal");
  try {
    Store store("/dev/null");
    ADD_FAILURE() << "opened /dev/null";
  } catch (const BadInputError& error) {
    EXPECT_EQ(std::string(error.what()),
              "/dev/null: cannot use as a results database: it is a character device, not a regular file");
  }
  if (!journal_was_there) EXPECT_FALSE(fs::exists("/dev/null-journal"));

  fs::create_directory(scratch_.path("folder"));
  expect_refused_untouched(scratch_.path("folder"), "it is a directory, not a regular file");
  // A FIFO would block the open until someone writes to it.
  ASSERT_EQ(mkfifo(scratch_.path("fifo").c_str(), 0600), 0);
  try {
    Store store(scratch_.path("fifo"), Store::Open::existing);
    ADD_FAILURE() << "opened a FIFO";
  } catch (const BadInputError& error) {
    EXPECT_NE(std::string(error.what()).find("it is a pipe (FIFO), not a regular file"), std::string::npos) << error.what();
  }
}

// Overwrites the first byte (the b-tree page type) of `table`'s root page.
void damage_root_page(const std::string& path, const std::string& table) {
  std::int64_t root = 0, page_size = 0;
  {
    SQLite::Database db(path, SQLite::OPEN_READONLY);
    SQLite::Statement query(db, "SELECT rootpage FROM sqlite_master WHERE name = ?");
    query.bind(1, table);
    ASSERT_TRUE(query.executeStep());
    root = query.getColumn(0).getInt64();
    page_size = db.execAndGet("PRAGMA page_size").getInt64();
  }
  ASSERT_FALSE(fs::exists(path + "-wal") && fs::file_size(path + "-wal") > 0) << "changes not checkpointed";
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  file.seekp((root - 1) * page_size);
  file.put('\x00');
}

TEST_F(StoreTest, RefusesADamagedDatabaseNamingTheFirstProblemOfItsQuickCheck) {
  {
    Store store(path_);
    const auto run_id = store.begin_run(run_record());
    auto [c, r] = gpu_case();
    for (int i = 0; i < 2000; ++i) r.samples.push_back({80.0 + i % 7, std::nullopt, 25.0});
    store.add_case(run_id, c, r);
  }
  ASSERT_NO_FATAL_FAILURE(damage_root_page(path_, "samples"));
  expect_refused_untouched(path_, "the database is damaged (PRAGMA quick_check: Page ");
  expect_refused_untouched(path_, "the database is damaged", Store::Open::existing);
  // A worker of --isolate skips the check its parent made; it is still an attnsweep database.
  EXPECT_NO_THROW(Store(path_, Store::Open::existing_without_quick_check));
}

// What `body` returns, computed in a child process (which exits without running
// anything of the test's): for limits and failures the test process must not take.
std::string in_child_process(const std::function<std::string()>& body) {
  int pipe_ends[2];
  if (pipe(pipe_ends) != 0) return "pipe failed";
  const pid_t pid = fork();
  if (pid == 0) {
    close(pipe_ends[0]);
    std::string result;
    try {
      result = body();
    } catch (const std::exception& error) {
      result = std::string("unexpected exception: ") + error.what();
    }
    const ssize_t written = write(pipe_ends[1], result.data(), result.size());
    _exit(written == static_cast<ssize_t>(result.size()) ? 0 : 1);
  }
  close(pipe_ends[1]);
  std::string result;
  char buffer[4096];
  for (ssize_t n; (n = read(pipe_ends[0], buffer, sizeof buffer)) > 0;) result.append(buffer, static_cast<std::size_t>(n));
  close(pipe_ends[0]);
  waitpid(pid, nullptr, 0);
  return result;
}

// A full filesystem, simulated by RLIMIT_FSIZE (writes past the limit fail with
// EFBIG, or are cut short, as on a full disk), at every size a new database can
// reach while it is created: the error is the first one SQLite met (not "cannot
// rollback - no transaction is active" from the ROLLBACK after it, as before),
// and the file the store created is gone, with its WAL and shared-memory files
// (a 4 KB database was left before).
TEST_F(StoreTest, AFullFilesystemWhileCreatingReportsTheFirstErrorAndLeavesNoFile) {
  int refused = 0;
  for (rlim_t limit = 2048; limit <= 128 * 1024; limit += 2048) {  // a write cut short, or refused whole
    SCOPED_TRACE("file size limit " + std::to_string(limit));
    const std::string path = scratch_.path("full-" + std::to_string(limit) + ".db");
    const std::string outcome = in_child_process([&] {
      signal(SIGXFSZ, SIG_IGN);
      const rlimit file_size{limit, limit};
      setrlimit(RLIMIT_FSIZE, &file_size);
      try {
        Store store(path);
        return std::string("opened");
      } catch (const BadInputError& error) {
        return std::string(error.what());
      }
    });
    if (outcome == "opened") continue;
    ++refused;
    EXPECT_EQ(outcome.rfind(path + ": cannot use as a results database: ", 0), 0u) << outcome;
    EXPECT_EQ(outcome.find("cannot rollback"), std::string::npos) << outcome;
    EXPECT_TRUE(outcome.find("database or disk is full") != std::string::npos ||
                outcome.find("disk I/O error") != std::string::npos)
        << outcome;
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) EXPECT_FALSE(fs::exists(path + suffix)) << suffix;
  }
  EXPECT_GT(refused, 10);
}

// ---- the claim on a run (issue 10) ----------------------------------------------------

// A live process on this host that is not this one, until destroyed.
class OtherProcess {
 public:
  OtherProcess() : pid_(fork()) {
    if (pid_ == 0) {
      pause();
      _exit(0);
    }
  }
  ~OtherProcess() {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  Claim claim() const { return {pid_, Claim::this_process().host}; }

 private:
  pid_t pid_;
};

// The pid of a process of this host that has ended and been reaped.
std::int64_t ended_pid() {
  const pid_t pid = fork();
  if (pid == 0) _exit(0);
  waitpid(pid, nullptr, 0);
  return pid;
}

struct ClaimColumns {
  std::optional<std::int64_t> pid;
  std::string host, claimed_at, heartbeat_at, status;
};
ClaimColumns claim_of(const std::string& path, std::int64_t run_id) {
  SQLite::Database db(path, SQLite::OPEN_READONLY);
  SQLite::Statement query(db, "SELECT owner_pid, owner_host, claimed_at, heartbeat_at, status FROM runs WHERE run_id = ?");
  query.bind(1, run_id);
  if (!query.executeStep()) return {};
  auto text = [&](int column) { return query.getColumn(column).isNull() ? std::string() : query.getColumn(column).getString(); };
  return {query.getColumn(0).isNull() ? std::nullopt : std::optional<std::int64_t>(query.getColumn(0).getInt64()),
          text(1), text(2), text(3), text(4)};
}

// Sets the run's heartbeat `minutes_ago` minutes back (SQLite's clock, UTC).
void age_heartbeat(const std::string& path, std::int64_t run_id, int minutes_ago) {
  SQLite::Database db(path, SQLite::OPEN_READWRITE);
  SQLite::Statement update(db, "UPDATE runs SET heartbeat_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now', ?) WHERE run_id = ?");
  update.bind(1, "-" + std::to_string(minutes_ago) + " minutes");
  update.bind(2, run_id);
  update.exec();
}

TEST_F(StoreTest, BeginRunClaimsTheRunForThisProcess) {
  Store store(path_);
  const auto run_id = store.begin_run(run_record());
  const ClaimColumns claim = claim_of(path_, run_id);
  EXPECT_EQ(claim.pid, ::getpid());
  EXPECT_EQ(claim.host, Claim::this_process().host);
  EXPECT_FALSE(claim.host.empty());
  EXPECT_EQ(claim.claimed_at.size(), std::string("2026-11-30T03:15:53Z").size()) << claim.claimed_at;
  EXPECT_EQ(claim.heartbeat_at, claim.claimed_at);
  EXPECT_TRUE(store.heartbeat(run_id));
}

TEST_F(StoreTest, ARunHeldByAnotherLiveProcessIsRefusedSayingWhoHoldsItAndNothingChanges) {
  const OtherProcess other;
  Store store(path_);
  const auto run_id = store.begin_run(run_record(), other.claim());
  const ClaimColumns before = claim_of(path_, run_id);
  try {
    store.claim_run(run_id);
    ADD_FAILURE() << "took a run another live process holds";
  } catch (const RunClaimedError& error) {
    const std::string message = error.what();
    EXPECT_EQ(message.rfind(path_ + ": run " + std::to_string(run_id) + " is being run by pid " +
                                std::to_string(other.claim().pid) + " on host " + other.claim().host + " since " +
                                before.claimed_at + ", last heartbeat ", 0), 0u) << message;
    EXPECT_NE(message.find(" s ago; wait for it, or stop it"), std::string::npos) << message;
    EXPECT_EQ(error.holder, other.claim());
    EXPECT_EQ(error.run_id, run_id);
  }
  EXPECT_THROW(store.claim_run(run_id), BadInputError);  // exit code 2
  const ClaimColumns after = claim_of(path_, run_id);
  EXPECT_EQ(after.pid, before.pid);
  EXPECT_EQ(after.heartbeat_at, before.heartbeat_at);
  EXPECT_FALSE(store.heartbeat(run_id));  // this process does not hold it
  EXPECT_FALSE(store.finish_run(run_id, RunStatus::failed));  // nor may it end it
  EXPECT_EQ(claim_of(path_, run_id).status, "running");
}

TEST_F(StoreTest, ARunHeldOnAnotherHostWithAFreshHeartbeatIsRefused) {
  Store store(path_);
  const auto run_id = store.begin_run(run_record(), Claim{ended_pid(), "another-host"});  // its pid means nothing here
  age_heartbeat(path_, run_id, kClaimStaleAfterSeconds / 60 - 1);
  EXPECT_THROW(store.claim_run(run_id), RunClaimedError);
  EXPECT_EQ(claim_of(path_, run_id).host, "another-host");
}

TEST_F(StoreTest, AClaimWhoseHeartbeatIsOlderThanTheLimitIsTakenOver) {
  const OtherProcess other;  // alive, yet silent for too long: hung, or its pid reused
  Store store(path_);
  const auto here = store.begin_run(run_record(), other.claim());
  const auto there = store.begin_run(run_record(), Claim{42, "another-host"});
  for (const auto run_id : {here, there}) {
    age_heartbeat(path_, run_id, kClaimStaleAfterSeconds / 60 + 1);
    store.claim_run(run_id);
    const ClaimColumns claim = claim_of(path_, run_id);
    EXPECT_EQ(claim.pid, ::getpid());
    EXPECT_EQ(claim.host, Claim::this_process().host);
    EXPECT_EQ(claim.status, "running");
  }
}

TEST_F(StoreTest, AClaimOfAProcessThatEndedOnThisHostIsTakenOverAtOnce) {
  Store store(path_);
  const auto run_id = store.begin_run(run_record(), Claim{ended_pid(), Claim::this_process().host});
  store.claim_run(run_id);
  EXPECT_EQ(claim_of(path_, run_id).pid, ::getpid());

  // A zombie (ended, not reaped yet) cannot write either.
  const pid_t zombie = fork();
  if (zombie == 0) _exit(0);
  siginfo_t info{};
  ASSERT_EQ(waitid(P_PID, static_cast<id_t>(zombie), &info, WEXITED | WNOWAIT), 0);
  const auto second = store.begin_run(run_record(), Claim{zombie, Claim::this_process().host});
  EXPECT_NO_THROW(store.claim_run(second));
  waitpid(zombie, nullptr, 0);
}

TEST_F(StoreTest, ClaimingTakesAFinishedRunAndRenewsOnesOwnClaim) {
  Store store(path_);
  const auto run_id = store.begin_run(run_record());
  EXPECT_TRUE(store.finish_run(run_id, RunStatus::interrupted));
  const ClaimColumns released = claim_of(path_, run_id);
  EXPECT_FALSE(released.pid.has_value());
  EXPECT_TRUE(released.host.empty() && released.claimed_at.empty() && released.heartbeat_at.empty());
  store.claim_run(run_id);
  EXPECT_EQ(claim_of(path_, run_id).status, "running");
  SQLite::Database db(path_, SQLite::OPEN_READONLY);
  EXPECT_TRUE(db.execAndGet("SELECT finished_at FROM runs").isNull());
  EXPECT_NO_THROW(store.claim_run(run_id));  // held by this process already
  try {
    store.claim_run(run_id + 1);
    ADD_FAILURE() << "claimed a run that does not exist";
  } catch (const BadInputError& error) {
    EXPECT_EQ(std::string(error.what()), path_ + ": no run " + std::to_string(run_id + 1));
  }
}

TEST_F(StoreTest, HeartbeatAndFinishOnlyWhileHoldingTheRun) {
  Store store(path_);
  const auto run_id = store.begin_run(run_record());
  age_heartbeat(path_, run_id, 3);
  const std::string old_heartbeat = claim_of(path_, run_id).heartbeat_at;
  EXPECT_TRUE(store.heartbeat(run_id));
  EXPECT_GT(claim_of(path_, run_id).heartbeat_at, old_heartbeat);

  // This process went silent for too long and another took the run over.
  age_heartbeat(path_, run_id, kClaimStaleAfterSeconds / 60 + 1);
  const Claim successor{ended_pid(), "another-host"};
  store.claim_run(run_id, successor);
  EXPECT_FALSE(store.heartbeat(run_id));
  EXPECT_FALSE(store.finish_run(run_id, RunStatus::failed));  // must not mark it failed under the successor
  EXPECT_EQ(claim_of(path_, run_id).status, "running");
  EXPECT_EQ(claim_of(path_, run_id).host, "another-host");
  EXPECT_TRUE(store.finish_run(run_id, RunStatus::done, successor));
  EXPECT_EQ(claim_of(path_, run_id).status, "done");
  EXPECT_FALSE(claim_of(path_, run_id).pid.has_value());
}

// Two --resume at once: one takes the run, every other is told who has it
// (not "database is locked", not a UNIQUE constraint).
TEST_F(StoreTest, OfConcurrentClaimantsExactlyOneWins) {
  std::int64_t run_id = 0;
  {
    Store store(path_);
    run_id = store.begin_run(run_record());
    store.finish_run(run_id, RunStatus::interrupted);
  }
  constexpr int kClaimants = 6;
  int go[2], results[2], stay[2];
  ASSERT_EQ(pipe(go), 0);
  ASSERT_EQ(pipe(results), 0);
  ASSERT_EQ(pipe(stay), 0);
  std::vector<pid_t> claimants;
  for (int i = 0; i < kClaimants; ++i) {
    const pid_t pid = fork();
    if (pid == 0) {
      close(go[1]);
      close(results[0]);
      close(stay[1]);
      char byte = 0;
      char outcome = '?';
      try {
        Store store(path_, Store::Open::existing);
        if (read(go[0], &byte, 1) != 1) _exit(2);
        store.claim_run(run_id);
        outcome = 'W';
      } catch (const RunClaimedError&) {
        outcome = 'R';
      } catch (...) {
        outcome = 'E';
      }
      if (write(results[1], &outcome, 1) != 1) _exit(2);
      while (read(stay[0], &byte, 1) > 0) {  // alive until the parent has every answer
      }
      _exit(0);
    }
    claimants.push_back(pid);
  }
  close(go[0]);
  close(results[1]);
  close(stay[0]);
  const std::string start(kClaimants, 'g');
  ASSERT_EQ(write(go[1], start.data(), start.size()), static_cast<ssize_t>(start.size()));
  std::string outcomes;
  char outcome = 0;
  while (outcomes.size() < kClaimants && read(results[0], &outcome, 1) == 1) outcomes += outcome;
  close(stay[1]);
  for (const pid_t pid : claimants) waitpid(pid, nullptr, 0);
  close(go[1]);
  close(results[0]);
  EXPECT_EQ(std::count(outcomes.begin(), outcomes.end(), 'W'), 1) << outcomes;
  EXPECT_EQ(std::count(outcomes.begin(), outcomes.end(), 'R'), kClaimants - 1) << outcomes;
  const ClaimColumns claim = claim_of(path_, run_id);
  EXPECT_NE(std::find(claimants.begin(), claimants.end(), claim.pid.value_or(0)), claimants.end());
}

// Issue 21, finding 9: processes creating one new database at the same moment
// (released together from a pipe) all store their run. Before, one was refused
// ("database is locked") or both failed ("disk I/O error") with no file left:
// the process that made the empty file removed it under the other.
TEST_F(StoreTest, ProcessesCreatingOneNewDatabaseAtOnceAllStoreTheirRun) {
  constexpr int kRounds = 20, kWriters = 3;
  for (int round = 0; round < kRounds; ++round) {
    const std::string path = scratch_.path("new" + std::to_string(round) + ".db");
    const std::vector<int> exit_codes = attnsweep::testing::race_processes(kWriters, [&](int i) {
      try {
        Store store(path);
        store.begin_run(run_record());
        return 0;
      } catch (const BadInputError& error) {
        std::fprintf(stderr, "writer %d: %s\n", i, error.what());
        return 2;
      } catch (const std::exception& error) {
        std::fprintf(stderr, "writer %d: %s\n", i, error.what());
        return 3;
      }
    });
    EXPECT_EQ(exit_codes, std::vector<int>(kWriters, 0)) << "round " << round;
    ASSERT_TRUE(fs::exists(path)) << "round " << round;
    SQLite::Database check(path, SQLite::OPEN_READONLY);
    EXPECT_EQ(check.execAndGet("SELECT count(*) FROM runs").getInt(), kWriters) << "round " << round;
  }
  for (const auto& entry : fs::directory_iterator(scratch_.path("."))) {  // no private file left behind
    EXPECT_NE(entry.path().filename().string()[0], '.') << entry.path();
  }
}

}  // namespace
}  // namespace attnsweep::storage
