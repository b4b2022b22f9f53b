// The SQLite store on real files: round trip, versioning, refusal of foreign
// or newer databases, one transaction per case.
#include <gtest/gtest.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <vector>

#include "runner/common/errors.hpp"
#include "storage/fields.hpp"
#include "storage/store.hpp"
#include "tests/support/scratch_directory.hpp"

namespace attnsweep::storage {
namespace {

namespace fs = std::filesystem;

class StoreTest : public ::testing::Test {
 protected:
  attnsweep::testing::ScratchDirectory scratch_{"attnsweep-store"};
  std::string path_ = scratch_.path("results.db");

  static RunRecord run_record() {
    RunRecord run;
    run.name = "unit";
    run.config_yaml = "variants: [naive]\n";
    run.config_sha256 = "abc123";
    run.environment.device = Device::cuda(0);
    run.environment.device_name = "NVIDIA H200";
    run.environment.torch_version = "2.11.0";
    run.timing_protocol = "test protocol";
    run.flop_convention = "test convention";
    run.seed = 7;
    run.planned_cases = 2;
    return run;
  }

  static std::pair<Case, CaseResult> gpu_case() {
    Case c{3, "sdpa_cudnn", Shape{8, 16, 16, 1024, 1024, 64}, Dtype::bf16, true};
    CaseResult r;
    r.device = Device::cuda(0);
    r.timer = "cuda_event";
    r.sdpa_backend = "cudnn_attention";
    r.stop_reason = "target_rel_stdev";
    r.gpu_time_us = summarize({80, 81, 82, 79, 80, 84, 78});
    r.phases = {0.01, 0.02, 0.03, 0.5, 0.25, 0.125};
    r.cpu_dispatch_us_median = 25.5;
    r.rel_error = 2e-3;
    r.peak_mem_bytes = 123456789;
    r.flops = 1e9;
    r.min_bytes = 1e6;
    r.tflops = 12.5;
    r.bandwidth_gbps = 100;
    ProfileSummary profile;
    profile.profiled_forwards = 2;
    profile.attempts = 1;
    profile.kernels_each_forward = {1, 1};
    profile.memcpy_each_forward = {0, 0};
    profile.memset_each_forward = {1, 1};
    profile.cpu_ops_per_forward = 6;
    profile.kernel_time_us_per_forward = 57.8;
    profile.kernels = {{"cudnn_generated_fort_native_sdpa", "kernel", 1, 57.1, 57.1, 56.9, 57.3, 7},
                       {"Memset (Device)", "memset", 1, 0.7, 0.7, 0.6, 0.8, 7}};
    profile.ops = {{"aten::_cudnn_attention_forward", "op", 1, 30.4, 130.5}, {"cudaMemsetAsync", "cuda_runtime", 1, 76.1, 76.1}};
    KernelStat& cudnn = profile.kernels.front();  // launch metadata on one kernel; the memset has none
    cudnn.grid = "[132,1,1]";
    cudnn.block = "[384,1,1]";
    cudnn.registers_per_thread = 168;
    cudnn.shared_memory_bytes = 134144;
    cudnn.est_occupancy_pct = 0.0;
    r.profile = profile;
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
    case_id = store.add_case(run_id, c, r);
    store.finish_run(run_id, RunStatus::done);
  }
  SQLite::Database db(path_, SQLite::OPEN_READONLY);
  EXPECT_EQ(db.execAndGet("PRAGMA user_version").getInt(), kSchemaVersion);
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

TEST_F(StoreTest, MigratesASavedVersionOneDatabase) {
  ASSERT_NO_FATAL_FAILURE(copy_saved_database(1, path_));
  expect_migrated(path_, "saved-v1");
}

// tests/data/schema_v3.db: the same two cases, written with schema version 3.
TEST_F(StoreTest, MigratesASavedVersionThreeDatabase) {
  ASSERT_NO_FATAL_FAILURE(copy_saved_database(3, path_));
  expect_migrated(path_, "saved-v3");
  SQLite::Database db(path_, SQLite::OPEN_READONLY);
  // Columns of version 3 keep their values; the ones version 4 added are empty for old cases.
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM cases WHERE variant = 'naive' AND gpu_time_us_median IS NULL "
                          "AND cpu_time_us_median > 0 AND samples = 3 AND timing_seconds IS NULL").getInt(), 1);
}

// tests/data/schema_v2.db: the same two cases, written with schema version 2.
TEST_F(StoreTest, MigratesASavedVersionTwoDatabase) {
  ASSERT_NO_FATAL_FAILURE(copy_saved_database(2, path_));
  expect_migrated(path_, "saved-v2");
  SQLite::Database db(path_, SQLite::OPEN_READONLY);
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM samples WHERE mode = 'eager' AND throttled = 0").getInt(), 3);
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
  store.add_case(run_id, c, r);
  EXPECT_THROW(store.add_case(run_id, c, r), SQLite::Exception);
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

}  // namespace
}  // namespace attnsweep::storage
