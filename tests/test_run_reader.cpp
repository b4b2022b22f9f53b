// RunReader on real files: what the Store wrote comes back field by field,
// typed; files that are missing, foreign, older or newer are refused and left
// as they were.
#include <gtest/gtest.h>

#include <SQLiteCpp/SQLiteCpp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <set>
#include <stdexcept>
#include <tuple>

#include "runner/common/errors.hpp"
#include "runner/storage/case_columns.hpp"
#include "runner/storage/run_columns.hpp"
#include "runner/storage/run_reader.hpp"
#include "runner/storage/trace_location.hpp"
#include "runner/storage/store.hpp"
#include "tests/support/run_record.hpp"
#include "tests/support/scratch_directory.hpp"
#include "tests/support/unit_gpu_case.hpp"

namespace attnsweep::storage {
namespace {

namespace fs = std::filesystem;

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

RunRecord run_record(const std::string& name) {
  RunRecord run = attnsweep::testing::unit_run_record(name);
  run.config_path = "configs/unit.yaml";
  run.environment.hostname = "node7";
  run.planned_cases = 3;
  run.measure.case_order = CaseOrder::shuffled;
  run.ceiling_bf16_tflops = 800.5;
  return run;
}

// Profiled on the GPU: kernels (the first with launch metadata), ops, eager
// samples and graph replays taken interleaved.
std::pair<Case, CaseResult> gpu_case() {
  auto [c, r] = attnsweep::testing::profiled_cudnn_case(2, Shape{8, 16, 4, 1024, 2048, 64});
  r.graph_time_us = summarize({70, 71, 72});
  r.trace_path = "traces/2.json";
  r.sm_clock_mhz_mean = 1980;
  r.throttled_samples = 1;
  r.launch_latency_hidden = true;
  r.warnings = {"counts differed once", "slow clock"};
  r.wall_seconds = 1.5;
  r.profile->attempts = 2;
  r.profile->kernels_each_forward = {2, 2};
  KernelStat flash =
      attnsweep::testing::launched_as_cudnn_attention({"flash_fwd", "kernel", 1, 50.1, 50.1, 49.9, 50.3, 7});
  flash.blocks_per_sm = 1.5;
  flash.warps_per_sm = 12;
  flash.est_occupancy_pct = 18.75;
  // Stored in this order, which is not the table's key order (kind, name).
  r.profile->kernels = {flash,
                        {"Memset (Device)", "memset", 1, 0.7, 0.7, 0.6, 0.8, 7},
                        {"aaa_reduce", "kernel", 1, 7.0, 7.0, 6.9, 7.1, 7}};
  r.profile->ops.push_back({"cudaLaunchKernel", "cuda_runtime", 2, 8.5, 8.5});
  const auto eager = [](double us, bool throttled) {
    return TimingSample{us, std::nullopt, us / 4, SampleMode::eager, 1980.0, throttled, true, false};
  };
  const auto graph = [](double us) {
    return TimingSample{us, std::nullopt, std::nullopt, SampleMode::graph, 1975.0, false, false, false};
  };
  r.samples = {eager(80, false), eager(81, true), graph(70), eager(82, false), graph(71), eager(83, false), graph(72)};
  // The counter pass's figures (schema 21), so that every one of its columns is read back with a value.
  attnsweep::testing::read_counters(r);
  return {c, r};
}

// On the CPU: profiled (aten ops only), timed by the steady clock.
std::pair<Case, CaseResult> cpu_case() {
  Case c{0, "naive", Shape{1, 2, 2, 16, 16, 8}, Dtype::fp32, false};
  CaseResult r;
  r.device = Device::cpu();
  r.timer = "steady_clock";
  r.cpu_time_us = summarize({100, 110, 120});
  r.flops = 2e6;
  r.min_bytes = 4e3;
  r.wall_seconds = std::numeric_limits<double>::quiet_NaN();
  ProfileSummary profile;
  profile.profiled_forwards = 2;
  profile.attempts = 1;
  profile.kernels_each_forward = {0, 0};
  profile.cpu_ops_per_forward = 9;
  profile.ops = {{"aten::matmul", "op", 2, 10, 40}};
  r.profile = profile;
  for (double us : {100.0, 110.0, 120.0}) r.samples.push_back({std::nullopt, us, us, SampleMode::eager});
  r.counters_why_not = "hardware counters are read on a CUDA device only (this case ran on the CPU)";
  return {c, r};
}

std::pair<Case, CaseResult> unsupported_case() {
  Case c{1, "sdpa_flash", Shape{1, 1, 1, 8, 8, 8}, Dtype::fp32, true};
  CaseResult r;
  r.status = CaseStatus::unsupported;
  r.error_message = "Expected query, key and value to all be of dtype: {Half, BFloat16}";
  r.device = Device::cuda(0);
  return {c, r};
}

class RunReaderTest : public ::testing::Test {
 protected:
  attnsweep::testing::ScratchDirectory scratch_{"attnsweep-reader"};
  std::string path_ = scratch_.path("results.db");

  // One finished run with the three cases, stored out of plan order; returns its run_id.
  std::int64_t write_run() {
    Store store(path_);
    const std::int64_t run_id = store.begin_run(run_record("unit"));
    for (const auto& [c, r] : {gpu_case(), cpu_case(), unsupported_case()}) store.add_case(run_id, c, r);
    store.finish_run(run_id, RunStatus::done);
    return run_id;
  }

  static std::int64_t case_id(const RunReader& reader, std::int64_t run_id, const std::string& variant) {
    for (const auto& row : reader.cases(run_id)) {
      if (row.identity.variant == variant) return row.case_id;
    }
    ADD_FAILURE() << "no case " << variant;
    return -1;
  }
};

TEST_F(RunReaderTest, ReadsTheRunAsStored) {
  const auto run_id = write_run();
  const RunReader reader(path_);
  const auto run = reader.run(run_id);
  ASSERT_TRUE(run.has_value());
  EXPECT_EQ(run->run_id, run_id);
  EXPECT_EQ(run->name, "unit");
  EXPECT_EQ(run->description, "");  // stored as NULL
  EXPECT_EQ(run->config_path, "configs/unit.yaml");
  EXPECT_EQ(run->config_yaml, "variants: [naive]\n");
  EXPECT_EQ(run->config_sha256, "abc123");
  EXPECT_EQ(run->status, RunStatus::done);
  EXPECT_FALSE(run->started_at.empty());
  EXPECT_FALSE(run->finished_at.empty());
  EXPECT_EQ(run->device, Device::cuda(0));
  EXPECT_EQ(run->device_name, "NVIDIA H200");
  EXPECT_EQ(run->hostname, "node7");
  EXPECT_EQ(run->torch_version, "2.11.0");
  EXPECT_EQ(run->cuda_version, "");
  EXPECT_FALSE(run->attnsweep_version.empty());
  EXPECT_EQ(run->timing_protocol, "test protocol");
  EXPECT_EQ(run->flop_convention, "test convention");
  EXPECT_EQ(run->seed, 7u);
  EXPECT_EQ(run->planned_cases, 3);
  EXPECT_FALSE(run->isolate);
  EXPECT_EQ(run->case_order, CaseOrder::shuffled);
  EXPECT_EQ(run->ceiling_bf16_tflops, 800.5);
  EXPECT_FALSE(run->ceiling_copy_gbps.has_value());
  // Finished: no process holds it any more.
  EXPECT_FALSE(run->owner_pid.has_value());
  EXPECT_EQ(run->owner_host, "");
  EXPECT_EQ(run->claimed_at, "");
  EXPECT_EQ(run->heartbeat_at, "");
  EXPECT_FALSE(reader.run(run_id + 1).has_value());
}

TEST_F(RunReaderTest, ARunningRunSaysWhichProcessHoldsIt) {
  Store store(path_);
  const auto run_id = store.begin_run(run_record("live"));
  const auto run = RunReader(path_).run(run_id);
  ASSERT_TRUE(run.has_value());
  EXPECT_EQ(run->owner_pid, ::getpid());
  EXPECT_EQ(run->owner_host, Claim::this_process().host);
  EXPECT_EQ(run->claimed_at, run->started_at);
  EXPECT_EQ(run->heartbeat_at, run->started_at);
  store.finish_run(run_id, RunStatus::interrupted);
  store.claim_run(run_id, Claim{4242, "node7"});  // a --resume elsewhere
  const auto resumed = RunReader(path_).run(run_id);
  EXPECT_EQ(resumed->owner_pid, 4242);
  EXPECT_EQ(resumed->owner_host, "node7");
  EXPECT_EQ(resumed->status, RunStatus::running);
  EXPECT_FALSE(resumed->claimed_at.empty());
}

TEST_F(RunReaderTest, LatestRunAndAllRuns) {
  {
    Store store(path_);
    const RunReader empty(path_);
    EXPECT_FALSE(empty.latest_run().has_value());
    EXPECT_TRUE(empty.runs().empty());
    store.begin_run(run_record("first"));
    store.begin_run(run_record("second"));
  }
  const RunReader reader(path_);
  const auto latest = reader.latest_run();
  ASSERT_TRUE(latest.has_value());
  EXPECT_EQ(latest->name, "second");
  EXPECT_EQ(latest->status, RunStatus::running);
  EXPECT_TRUE(latest->finished_at.empty());
  const auto runs = reader.runs();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].name, "first");
  EXPECT_EQ(runs[1].name, "second");
  EXPECT_LT(runs[0].run_id, runs[1].run_id);
}

TEST_F(RunReaderTest, CasesComeBackInPlanOrderWithTheirIdentity) {
  const auto run_id = write_run();
  const RunReader reader(path_);
  const auto cases = reader.cases(run_id);
  ASSERT_EQ(cases.size(), 3u);
  EXPECT_EQ(cases[0].identity.variant, "naive");
  EXPECT_EQ(cases[1].identity.variant, "sdpa_flash");
  EXPECT_EQ(cases[2].identity.variant, "sdpa_cudnn");
  const Case& identity = cases[2].identity;
  EXPECT_EQ(identity.plan_index, 2);
  EXPECT_EQ(identity.shape, (Shape{8, 16, 4, 1024, 2048, 64}));
  EXPECT_EQ(identity.dtype, Dtype::bf16);
  EXPECT_TRUE(identity.mask.is_causal());
  EXPECT_EQ(cases[0].identity.dtype, Dtype::fp32);
  EXPECT_FALSE(cases[0].identity.mask.is_causal());
  for (const auto& row : cases) EXPECT_EQ(row.run_id, run_id);
  EXPECT_EQ(reader.stored_plan_indexes(run_id), (std::set<int>{0, 1, 2}));
  EXPECT_TRUE(reader.stored_plan_indexes(run_id + 1).empty());
  EXPECT_TRUE(reader.cases(run_id + 1).empty());
}

TEST_F(RunReaderTest, ThePassAndTheBackwardColumnsComeBackAsStored) {
  Store store(path_);
  const std::int64_t run_id = store.begin_run(run_record("passes"));
  auto [forward, forward_result] = cpu_case();
  store.add_case(run_id, forward, forward_result);
  Case backward = forward;
  backward.plan_index = 1;
  backward.pass = Pass::backward;
  CaseResult backward_result = forward_result;
  backward_result.grad_rel_error_q = 1.5e-3;
  backward_result.grad_rel_error_k = 2.5e-3;
  backward_result.grad_rel_error_v = 3e-4;
  backward_result.sdpa_backend_backward = "flash_attention";
  store.add_case(run_id, backward, backward_result);
  store.finish_run(run_id, RunStatus::done);

  const auto cases = RunReader(path_).cases(run_id);
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_EQ(cases[0].identity.pass, Pass::forward);
  EXPECT_FALSE(cases[0].grad_rel_error_q.has_value());
  EXPECT_EQ(cases[0].sdpa_backend_backward, "");
  EXPECT_EQ(cases[1].identity.pass, Pass::backward);
  EXPECT_TRUE(cases[1].identity.same_measurement(backward));
  EXPECT_FALSE(cases[1].identity.same_measurement(cases[0].identity));
  EXPECT_EQ(cases[1].grad_rel_error_q, 1.5e-3);
  EXPECT_EQ(cases[1].grad_rel_error_k, 2.5e-3);
  EXPECT_EQ(cases[1].grad_rel_error_v, 3e-4);
  EXPECT_EQ(cases[1].sdpa_backend_backward, "flash_attention");
  SQLite::Database db(path_, SQLite::OPEN_READONLY);
  EXPECT_EQ(db.execAndGet("SELECT group_concat(pass || ':' || ifnull(grad_rel_error_k, 'null'), ',') FROM "
                          "(SELECT * FROM results ORDER BY plan_index)").getString(),
            "forward:null,backward:0.0025");
}

// Schema 11: the energy window's four columns come back as stored, NULL where
// none was measured; the results view adds TFLOP per joule (flops / 1e12 / energy_j).
TEST_F(RunReaderTest, TheEnergyColumnsComeBackAndTheViewGivesTflopPerJoule) {
  Store store(path_);
  const std::int64_t run_id = store.begin_run(run_record("energy"));
  auto [measured, measured_result] = gpu_case();  // 1e9 FLOPs per pass
  measured_result.energy_j = 0.0125;
  measured_result.energy_power_w = 612.5;
  measured_result.energy_window_s = 0.3125;
  measured_result.energy_passes = 3920;
  store.add_case(run_id, measured, measured_result);
  auto [unmeasured, unmeasured_result] = gpu_case();
  unmeasured.plan_index = 3;
  store.add_case(run_id, unmeasured, unmeasured_result);
  auto [on_cpu, cpu_result] = cpu_case();
  store.add_case(run_id, on_cpu, cpu_result);
  store.finish_run(run_id, RunStatus::done);

  const auto cases = RunReader(path_).cases(run_id);
  ASSERT_EQ(cases.size(), 3u);  // by plan_index: the CPU case (0), the measured (2), the unmeasured (3)
  const CaseRow& row = cases[1];
  EXPECT_EQ(row.energy_j, 0.0125);
  EXPECT_EQ(row.energy_power_w, 612.5);
  EXPECT_EQ(row.energy_window_s, 0.3125);
  EXPECT_EQ(row.energy_passes, 3920);
  ASSERT_TRUE(row.tflop_per_joule().has_value());
  EXPECT_DOUBLE_EQ(*row.tflop_per_joule(), 1e9 / 1e12 / 0.0125);  // 0.08 TFLOP/J
  for (const CaseRow* none : {&cases[0], &cases[2]}) {
    EXPECT_FALSE(none->energy_j || none->energy_power_w || none->energy_window_s || none->energy_passes);
    EXPECT_FALSE(none->tflop_per_joule());
  }
  SQLite::Database db(path_, SQLite::OPEN_READONLY);
  EXPECT_EQ(db.execAndGet("SELECT group_concat(plan_index || ':' || ifnull(energy_j, 'null') || ':' || "
                          "ifnull(energy_power_w, 'null') || ':' || ifnull(round(tflop_per_joule, 6), 'null'), ',') "
                          "FROM (SELECT * FROM results ORDER BY plan_index)").getString(),
            "0:null:null:null,2:0.0125:612.5:0.08,3:null:null:null");
  // A zero energy (planted: the store never writes one) gives no ratio, not an error.
  SQLite::Database writable(path_, SQLite::OPEN_READWRITE);
  writable.exec("UPDATE cases SET energy_j = 0 WHERE plan_index = 3");
  EXPECT_TRUE(writable.execAndGet("SELECT tflop_per_joule FROM results WHERE plan_index = 3").isNull());
}

TEST_F(RunReaderTest, GpuCaseComesBackFieldByField) {
  const auto run_id = write_run();
  const RunReader reader(path_);
  const CaseRow row = reader.cases(run_id).at(2);
  EXPECT_EQ(row.device, Device::cuda(0));
  EXPECT_EQ(row.status, CaseStatus::ok);
  EXPECT_EQ(row.error_message, "");
  EXPECT_EQ(row.warnings, "counts differed once; slow clock");
  EXPECT_EQ(row.sdpa_backend, "cudnn_attention");
  EXPECT_EQ(row.timer, "cuda_event");
  EXPECT_EQ(row.stop_reason, StopReason::target_rel_stdev);
  // Written as traces/2.json from the current directory, stored from the database's folder.
  EXPECT_EQ(reader.run(run_id)->trace_path_base, "database");
  EXPECT_EQ(trace_file_of(path_, "database", row.trace_path),
            std::filesystem::absolute("traces/2.json").lexically_normal().string());
  EXPECT_EQ(row.graph_error, "");
  EXPECT_EQ(row.kernels_per_forward, 2);
  EXPECT_EQ(row.memcpy_per_forward, 0);
  EXPECT_EQ(row.memset_per_forward, 1);
  EXPECT_EQ(row.cpu_ops_per_forward, 6);
  EXPECT_EQ(row.counts_consistent, true);
  EXPECT_EQ(row.profile_attempts, 2);
  EXPECT_EQ(row.profiled_forwards, 2);
  EXPECT_EQ(row.kernel_time_us_per_forward, 57.8);
  EXPECT_EQ(row.samples, 4);  // eager only
  ASSERT_TRUE(row.graph_time_us.has_value());
  EXPECT_EQ(row.graph_time_us->count, 3);
  EXPECT_EQ(row.throttled_samples, 1);
  EXPECT_EQ(row.launch_latency_hidden, true);
  ASSERT_TRUE(row.gpu_time_us.has_value());
  EXPECT_EQ(row.gpu_time_us->median, 80);
  EXPECT_FALSE(row.cpu_time_us.has_value());
  EXPECT_EQ(row.graph_time_us->median, 71);
  EXPECT_EQ(row.median_us(), 80);
  ASSERT_TRUE(row.median_ci_rel.has_value());
  EXPECT_DOUBLE_EQ(*row.median_ci_rel, 0.0375);
  EXPECT_EQ(row.cpu_dispatch_us_median, 25.5);
  EXPECT_EQ(row.rel_error, 2e-3);
  EXPECT_EQ(row.tflops, 12.5);
  EXPECT_EQ(row.bandwidth_gbps, 100);
  EXPECT_EQ(row.sm_clock_mhz_mean, 1980);
  EXPECT_EQ(row.wall_seconds, 1.5);
  EXPECT_EQ(row.peak_mem_bytes, 123456789);
  EXPECT_EQ(row.flops, 1e9);
  EXPECT_EQ(row.min_bytes, 1e6);
  EXPECT_FALSE(row.finished_at.empty());
}

TEST_F(RunReaderTest, CpuCaseHasNoGpuCounts) {
  const auto run_id = write_run();
  const RunReader reader(path_);
  const CaseRow row = reader.cases(run_id).at(0);
  EXPECT_EQ(row.device, Device::cpu());
  EXPECT_EQ(row.status, CaseStatus::ok);
  EXPECT_EQ(row.timer, "steady_clock");
  EXPECT_FALSE(row.kernels_per_forward.has_value());  // NULL on the CPU: nothing is launched
  EXPECT_FALSE(row.memcpy_per_forward.has_value());
  EXPECT_FALSE(row.memset_per_forward.has_value());
  EXPECT_FALSE(row.kernel_time_us_per_forward.has_value());
  EXPECT_EQ(row.cpu_ops_per_forward, 9);
  EXPECT_EQ(row.counts_consistent, true);
  EXPECT_FALSE(row.gpu_time_us.has_value());
  ASSERT_TRUE(row.cpu_time_us.has_value());
  EXPECT_EQ(row.cpu_time_us->median, 110);
  EXPECT_EQ(row.median_us(), 110);
  EXPECT_FALSE(row.median_ci_rel.has_value());  // under 6 samples
  EXPECT_FALSE(row.graph_time_us.has_value());
  EXPECT_FALSE(row.throttled_samples.has_value());
  EXPECT_FALSE(row.launch_latency_hidden.has_value());
  EXPECT_FALSE(row.peak_mem_bytes.has_value());
  EXPECT_FALSE(row.wall_seconds.has_value());  // not finite
  EXPECT_EQ(row.samples, 3);
  EXPECT_EQ(row.warnings, "");
  EXPECT_TRUE(reader.kernels(row.case_id).empty());
  const auto ops = reader.ops(row.case_id);
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].name, "aten::matmul");
  const auto samples = reader.samples(row.case_id);
  ASSERT_EQ(samples.size(), 3u);
  for (std::size_t i = 0; i < samples.size(); ++i) {
    EXPECT_EQ(samples[i].mode, SampleMode::eager);
    EXPECT_FALSE(samples[i].gpu_time_us.has_value());
    EXPECT_EQ(samples[i].cpu_time_us, 100.0 + 10.0 * static_cast<double>(i));
  }
}

TEST_F(RunReaderTest, UnsupportedCaseHasItsReasonAndNoMeasurements) {
  const auto run_id = write_run();
  const RunReader reader(path_);
  const CaseRow row = reader.cases(run_id).at(1);
  EXPECT_EQ(row.status, CaseStatus::unsupported);
  EXPECT_NE(row.error_message.find("dtype"), std::string::npos);
  EXPECT_EQ(row.device, Device::cuda(0));
  EXPECT_EQ(row.sdpa_backend, "");
  EXPECT_FALSE(row.kernels_per_forward.has_value());
  EXPECT_FALSE(row.cpu_ops_per_forward.has_value());
  EXPECT_FALSE(row.counts_consistent.has_value());
  EXPECT_FALSE(row.profile_attempts.has_value());
  EXPECT_FALSE(row.samples.has_value());
  EXPECT_FALSE(row.median_us().has_value());
  EXPECT_FALSE(row.tflops.has_value());
  EXPECT_FALSE(row.rel_error.has_value());
  EXPECT_EQ(row.wall_seconds, 0);
  EXPECT_EQ(row.flops, 0);
  EXPECT_TRUE(reader.kernels(row.case_id).empty());
  EXPECT_TRUE(reader.ops(row.case_id).empty());
  EXPECT_TRUE(reader.samples(row.case_id).empty());
}

// Every field of a kernel or op row, to compare a row read back with the one
// stored whole (a difference prints both).
auto fields_of(const KernelStat& k) {
  return std::tie(k.name, k.kind, k.launches_per_forward, k.total_us, k.mean_us, k.min_us, k.max_us, k.stream, k.grid,
                  k.block, k.registers_per_thread, k.shared_memory_bytes, k.blocks_per_sm, k.warps_per_sm,
                  k.est_occupancy_pct);
}
auto fields_of(const OpStat& op) {
  return std::tie(op.name, op.kind, op.calls_per_forward, op.self_cpu_us, op.total_cpu_us);
}

// What gpu_case stored: its first kernel with the launch metadata (occupancy
// included), the memset without any; two ops.
TEST_F(RunReaderTest, KernelsAndOpsComeBackInStoredOrderWithLaunchMetadata) {
  const auto run_id = write_run();
  const RunReader reader(path_);
  const auto id = case_id(reader, run_id, "sdpa_cudnn");
  const ProfileSummary stored = *gpu_case().second.profile;
  const auto kernels = reader.kernels(id);
  ASSERT_EQ(kernels.size(), 3u);
  EXPECT_EQ(kernels[0].name, "flash_fwd");
  EXPECT_EQ(kernels[1].name, "Memset (Device)");
  EXPECT_EQ(kernels[2].name, "aaa_reduce");
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    EXPECT_EQ(fields_of(kernels[i]), fields_of(stored.kernels[i])) << stored.kernels[i].name;
  }
  EXPECT_EQ(kernels[0].est_occupancy_pct, 18.75);
  EXPECT_FALSE(kernels[1].registers_per_thread.has_value());

  const auto ops = reader.ops(id);
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[0].name, "aten::_cudnn_attention_forward");
  EXPECT_EQ(ops[1].name, "cudaLaunchKernel");
  for (std::size_t i = 0; i < ops.size(); ++i) EXPECT_EQ(fields_of(ops[i]), fields_of(stored.ops[i])) << stored.ops[i].name;
}

TEST_F(RunReaderTest, SamplesComeBackEagerThenGraphEachInOrder) {
  const auto run_id = write_run();
  const RunReader reader(path_);
  const auto samples = reader.samples(case_id(reader, run_id, "sdpa_cudnn"));
  ASSERT_EQ(samples.size(), 7u);
  const std::vector<double> eager_us = {80, 81, 82, 83}, graph_us = {70, 71, 72};
  for (std::size_t i = 0; i < 4; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(samples[i].mode, SampleMode::eager);
    EXPECT_EQ(samples[i].gpu_time_us, eager_us[i]);
    EXPECT_FALSE(samples[i].cpu_time_us.has_value());
    EXPECT_EQ(samples[i].host_dispatch_us, eager_us[i] / 4);
    EXPECT_EQ(samples[i].sm_clock_mhz, 1980);
    EXPECT_EQ(samples[i].throttled, i == 1);
    EXPECT_TRUE(samples[i].blocked);
    EXPECT_FALSE(samples[i].block_timed_out);
  }
  for (std::size_t i = 0; i < 3; ++i) {
    SCOPED_TRACE(i);
    const TimingSample& sample = samples[4 + i];
    EXPECT_EQ(sample.mode, SampleMode::graph);
    EXPECT_EQ(sample.gpu_time_us, graph_us[i]);
    EXPECT_FALSE(sample.host_dispatch_us.has_value());
    EXPECT_EQ(sample.sm_clock_mhz, 1975);
    EXPECT_FALSE(sample.throttled);
    EXPECT_FALSE(sample.blocked);
  }
}

TEST_F(RunReaderTest, SeesFinishedCasesOfARunStillRunning) {
  Store store(path_);
  const auto run_id = store.begin_run(run_record("live"));
  const auto [c, r] = cpu_case();
  store.add_case(run_id, c, r);
  const RunReader reader(path_);
  EXPECT_EQ(reader.latest_run()->status, RunStatus::running);
  EXPECT_EQ(reader.stored_plan_indexes(run_id), (std::set<int>{0}));
}

TEST_F(RunReaderTest, AStoredSpellingTheIdentitiesDoNotKnowIsAnError) {
  const auto run_id = write_run();
  {
    SQLite::Database db(path_, SQLite::OPEN_READWRITE);
    db.exec("UPDATE cases SET device = 'gpu0' WHERE plan_index = 1");  // device has no CHECK in the schema
  }
  const RunReader reader(path_);
  try {
    reader.cases(run_id);
    FAIL() << "read an unknown device";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("cases.device"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("'gpu0'"), std::string::npos) << error.what();
  }
}

// The constructor's refusals: each a BadInputError whose message starts with the path.
void expect_refused(const std::string& path, const std::string& reason) {
  try {
    RunReader reader(path);
    ADD_FAILURE() << "opened " << path;
  } catch (const BadInputError& error) {
    const std::string message = error.what();
    EXPECT_EQ(message.rfind(path + ": ", 0), 0u) << message;
    EXPECT_NE(message.find(reason), std::string::npos) << message;
  }
}

// ---- the column tables: one list per table, both directions ---------------------

// The columns of a table as the schema has them.
std::set<std::string> schema_columns(const std::string& path, const std::string& table) {
  SQLite::Database db(path, SQLite::OPEN_READONLY);
  SQLite::Statement query(db, "SELECT name FROM pragma_table_info(?)");
  query.bind(1, table);
  std::set<std::string> names;
  while (query.executeStep()) names.insert(query.getColumn(0).getString());
  return names;
}

template <typename Row>
std::set<std::string> table_columns(const fields::Table<Row>& table) {
  std::set<std::string> names;
  for (const auto& field : table.fields) {
    if (field.expression.empty()) names.insert(field.column);
  }
  return names;
}

// A stored value as the tests compare it.
fields::Value stored_value(const SQLite::Column& column) {
  if (column.isNull()) return {};
  if (column.isInteger()) return column.getInt64();
  if (column.isFloat()) return column.getDouble();
  return column.getString();
}

TEST_F(RunReaderTest, TheColumnTablesNameEveryColumnOfTheSchemaOnce) {
  write_run();
  EXPECT_EQ(table_columns(case_columns()), schema_columns(path_, "cases"));
  EXPECT_EQ(table_columns(run_columns()), schema_columns(path_, "runs"));
  EXPECT_EQ(case_columns().fields.size() - 3, schema_columns(path_, "cases").size());  // + 3 derived, no repeats
  EXPECT_EQ(run_columns().fields.size(), schema_columns(path_, "runs").size());
}

// What the reader made of each stored row, written back through the same
// table, is the stored value again, column by column: one mapping both ways.
TEST_F(RunReaderTest, ARowReadBackWritesTheValuesItWasReadFrom) {
  const std::int64_t run_id = write_run();
  const RunReader reader(path_);
  SQLite::Database db(path_, SQLite::OPEN_READONLY);
  int compared = 0;
  for (const CaseRow& row : reader.cases(run_id)) {
    for (const auto& field : case_columns().fields) {
      if (!fields::stored(field)) continue;
      SQLite::Statement query(db, "SELECT " + field.column + " FROM cases WHERE case_id = ?");
      query.bind(1, row.case_id);
      ASSERT_TRUE(query.executeStep());
      EXPECT_EQ(field.write(row), stored_value(query.getColumn(0))) << "cases." << field.column << " of " << row.identity.label();
      ++compared;
    }
  }
  EXPECT_EQ(compared, 3 * 112);  // 113 columns but case_id, for three cases
  const RunRow run = *reader.run(run_id);
  for (const auto& field : run_columns().fields) {
    if (!fields::stored(field)) continue;
    SQLite::Statement query(db, "SELECT " + field.column + " FROM runs WHERE run_id = ?");
    query.bind(1, run_id);
    ASSERT_TRUE(query.executeStep());
    EXPECT_EQ(field.write(run), stored_value(query.getColumn(0))) << "runs." << field.column;
  }
}

// The derived values the readers use are the results view's, computed by SQLite once.
TEST_F(RunReaderTest, TheDerivedValuesAreTheResultsViews) {
  const std::int64_t run_id = write_run();
  {
    SQLite::Database writable(path_, SQLite::OPEN_READWRITE);
    writable.exec("UPDATE cases SET energy_j = 0.0125, grad_rel_error_q = 1e-3, grad_rel_error_k = 3e-3, "
                  "grad_rel_error_v = 2e-3 WHERE plan_index = 2");
  }
  const RunReader reader(path_);
  SQLite::Database db(path_, SQLite::OPEN_READONLY);
  for (const CaseRow& row : reader.cases(run_id)) {
    SQLite::Statement view(db, "SELECT time_us_median, tflop_per_joule, grad_rel_error_max FROM results WHERE case_id = ?");
    view.bind(1, row.case_id);
    ASSERT_TRUE(view.executeStep());
    EXPECT_EQ(fields::to_value(row.median_us()), stored_value(view.getColumn(0))) << row.identity.label();
    EXPECT_EQ(fields::to_value(row.tflop_per_joule()), stored_value(view.getColumn(1))) << row.identity.label();
    EXPECT_EQ(fields::to_value(row.worst_grad_rel_error()), stored_value(view.getColumn(2))) << row.identity.label();
  }
  const CaseRow gpu = reader.cases(run_id).at(2);
  EXPECT_EQ(gpu.median_us(), 80);
  EXPECT_DOUBLE_EQ(*gpu.tflop_per_joule(), 1e9 / 1e12 / 0.0125);
  EXPECT_EQ(gpu.worst_grad_rel_error(), 3e-3);
}

// Printers pick a column by name and show it with the column's unit and digits.
TEST_F(RunReaderTest, APrinterPicksAColumnByNameWithItsDisplay) {
  const std::int64_t run_id = write_run();
  const CaseRow gpu = RunReader(path_).cases(run_id).at(2);
  const Shown tflops = case_value(gpu, "tflops");
  EXPECT_EQ(tflops.value, fields::Value{12.5});
  EXPECT_EQ(tflops.display.unit, "TFLOP/s");
  EXPECT_EQ(tflops.display.style, Display::Style::fixed);
  EXPECT_EQ(tflops.display.digits, 2);
  EXPECT_EQ(case_value(gpu, "time_us_median").value, fields::Value{80.0});
  EXPECT_EQ(case_value(gpu, "time_us_median").display.unit, "us");
  EXPECT_EQ(case_value(gpu, "rel_error").display.style, Display::Style::scientific);
  EXPECT_EQ(case_value(gpu, "gpu_time_us_p90").display.unit, "us");
  EXPECT_EQ(case_value(gpu, "sdpa_backend").value, fields::Value{std::string("cudnn_attention")});
  EXPECT_THROW(case_value(gpu, "no_such_column"), std::logic_error);
}

TEST_F(RunReaderTest, RefusesAMissingFileAndDoesNotCreateIt) {
  expect_refused(path_, "database not found");
  EXPECT_FALSE(fs::exists(path_));
}

TEST_F(RunReaderTest, RefusesAForeignSqliteDatabaseAndLeavesItByteIdentical) {
  {
    SQLite::Database db(path_, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    db.exec("CREATE TABLE mine (x); INSERT INTO mine VALUES (1)");
  }
  const std::string before = file_bytes(path_);
  expect_refused(path_, "not an attnsweep results database");
  EXPECT_EQ(file_bytes(path_), before);
}

// Another program's file whose user_version is one attnsweep used is not read
// as a results database (it failed later with "no such table: runs").
TEST_F(RunReaderTest, RefusesAForeignFileWithAnAttnsweepUserVersion) {
  {
    SQLite::Database db(path_, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    db.exec("CREATE TABLE notes (t); PRAGMA user_version = " + std::to_string(kSchemaVersion));
  }
  const std::string before = file_bytes(path_);
  expect_refused(path_, "not an attnsweep results database (user_version " + std::to_string(kSchemaVersion) +
                            " without attnsweep's application_id");
  EXPECT_EQ(file_bytes(path_), before);
}

TEST_F(RunReaderTest, RefusesWhatIsNotARegularFileWithoutBlocking) {
  ASSERT_EQ(mkfifo(path_.c_str(), 0600), 0);  // opening a FIFO would wait for a writer
  expect_refused(path_, "is not a regular file");
  expect_refused("/dev/null", "is not a regular file");
}

TEST_F(RunReaderTest, RefusesAnEmptyDatabase) {
  scratch_.write("results.db", "");
  expect_refused(path_, "is not an attnsweep results database (it is empty)");
  EXPECT_EQ(fs::file_size(path_), 0u);
}

TEST_F(RunReaderTest, RefusesANewerSchema) {
  { SQLite::Database db(path_, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE); db.exec("PRAGMA user_version = 99"); }
  expect_refused(path_, "schema version 99 is newer");
}

TEST_F(RunReaderTest, RefusesAnOlderSchemaWithoutMigratingIt) {
  fs::copy_file(ATTNSWEEP_SOURCE_DIR "/tests/data/schema_v3.db", path_);
  const std::string before = file_bytes(path_);
  expect_refused(path_, "schema version 3 is older");
  EXPECT_EQ(file_bytes(path_), before);
}

TEST_F(RunReaderTest, RefusesAFileThatIsNotSqlite) {
  scratch_.write("results.db", "this is not a database, just text that is long enough to have a header........");
  expect_refused(path_, "cannot read as a results database");
}

}  // namespace
}  // namespace attnsweep::storage
