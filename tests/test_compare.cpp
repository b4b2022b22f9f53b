// attnsweep compare at the library level: a baseline database written by the
// Store with CUDA-like cases (the study's kernel counts and backends, 50 to 200
// samples each with noise from a seeded generator, a few throttled outliers),
// copied, and changes planted in the copy with SQL. Each test asserts exactly
// which findings come out, with their case keys.
#include <gtest/gtest.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/common/errors.hpp"
#include "runner/common/sha256.hpp"
#include "runner/compare/compare_runs.hpp"
#include "runner/compare/comparison_report.hpp"
#include "runner/compare/environment_differences.hpp"
#include "runner/compare/mann_whitney.hpp"
#include "runner/measure/statistics.hpp"
#include "runner/storage/run_reader.hpp"
#include "runner/storage/store.hpp"
#include "tests/support/scratch_directory.hpp"

namespace attnsweep::compare {
namespace {

namespace fs = std::filesystem;

// One case of the synthetic nightly sweep, as an H200 gives it.
struct Synthetic {
  std::string variant;
  std::int64_t seq_len;
  Dtype dtype;
  int kernels, memcpy, memset;
  std::string backend;  // empty for the naive variants
  double median_us;
  double rel_error;
  int samples;
};

const std::vector<Synthetic>& synthetic_cases() {
  static const std::vector<Synthetic> cases = {
      {"naive", 1024, Dtype::bf16, 5, 1, 1, "", 1062.2, 3.6e-3, 60},
      {"naive_inplace", 1024, Dtype::bf16, 5, 0, 1, "", 933.0, 3.6e-3, 60},
      {"sdpa_math", 1024, Dtype::bf16, 20, 0, 0, "math", 2609.4, 2.9e-3, 50},
      {"sdpa_efficient", 1024, Dtype::bf16, 1, 0, 0, "efficient_attention", 179.5, 2.1e-3, 150},
      {"sdpa_flash", 1024, Dtype::bf16, 1, 0, 0, "flash_attention", 95.9, 2.0e-3, 200},
      {"sdpa_cudnn", 1024, Dtype::bf16, 1, 0, 1, "cudnn_attention", 60.3, 2.4e-3, 200},
      {"sdpa_auto", 1024, Dtype::bf16, 1, 0, 1, "cudnn_attention", 60.2, 2.4e-3, 200},
      {"sdpa_flash", 2048, Dtype::bf16, 1, 0, 0, "flash_attention", 341.7, 2.0e-3, 180},
      {"sdpa_auto", 2048, Dtype::fp16, 1, 0, 0, "flash_attention", 338.2, 2.6e-4, 180},
      {"sdpa_efficient", 2048, Dtype::fp32, 1, 0, 0, "efficient_attention", 2210.0, 3.1e-7, 90},
  };
  return cases;
}

// The place of a synthetic case in the plan, by variant, sequence length and dtype.
int index_of(const std::string& variant, std::int64_t seq_len, Dtype dtype = Dtype::bf16) {
  const auto& cases = synthetic_cases();
  for (std::size_t i = 0; i < cases.size(); ++i) {
    if (cases[i].variant == variant && cases[i].seq_len == seq_len && cases[i].dtype == dtype) return static_cast<int>(i);
  }
  ADD_FAILURE() << "no synthetic case " << variant << " " << seq_len;
  return 0;
}

Case case_of(const Synthetic& s, int plan_index) {
  Case c;
  c.plan_index = plan_index;
  c.variant = s.variant;
  c.shape = {8, 16, 16, s.seq_len, s.seq_len, 64};
  c.dtype = s.dtype;
  c.mask = Mask(true);
  return c;
}

std::string label_of(int plan_index) {
  const Synthetic& s = synthetic_cases().at(static_cast<std::size_t>(plan_index));
  return s.variant + " 8x16x" + std::to_string(s.seq_len) + "x64 " + to_string(s.dtype) + " causal cuda";
}

// Samples as a GPU gives them: a tight core (0.4% spread), a long right tail
// (5% of samples up to ~10% slower) and two throttled outliers, which the
// comparison must leave out.
CaseResult result_of(const Synthetic& s, std::mt19937_64& random) {
  CaseResult r;
  r.device = Device::cuda(0);
  r.gpu_uuid = "GPU-8c4d0e21-5b7a-4c1e-9f3a-1d2e3f4a5b6c";
  r.timer = "cuda_event";
  r.stop_reason = StopReason::target_rel_stdev;
  r.sdpa_backend = s.backend;
  r.rel_error = s.rel_error;
  r.flops = 4.0 * 8 * 16 * 64 * static_cast<double>(s.seq_len * (s.seq_len + 1) / 2);
  r.min_bytes = 2.0 * 4 * 8 * 16 * static_cast<double>(s.seq_len) * 64;
  r.power_cap_share = 0.05;
  r.thermal_cap_share = 0.0;
  std::normal_distribution<double> core(0, 0.004);
  std::uniform_real_distribution<double> unit(0, 1);
  std::exponential_distribution<double> tail(1 / 0.03);
  std::vector<double> kept;
  for (int i = 0; i < s.samples; ++i) {
    double time = s.median_us * (1 + core(random));
    if (unit(random) < 0.05) time += s.median_us * std::min(tail(random), 0.1);
    TimingSample sample{time, std::nullopt, 8.5, SampleMode::eager, 1980.0};
    if (i == 7 || i == 23) {  // clock under the throttle fraction: stored, not kept
      sample.gpu_time_us = 3 * s.median_us;
      sample.sm_clock_mhz = 1100.0;
      sample.throttled = true;
      ++r.throttled_samples;
    } else {
      kept.push_back(time);
    }
    r.samples.push_back(sample);
  }
  r.gpu_time_us = summarize(kept);
  r.sm_clock_mhz_mean = 1980.0;
  r.launch_latency_hidden = true;
  ProfileSummary profile;
  profile.profiled_forwards = 5;
  profile.attempts = 1;
  profile.kernels_each_forward.assign(5, s.kernels);
  profile.memcpy_each_forward.assign(5, s.memcpy);
  profile.memset_each_forward.assign(5, s.memset);
  profile.cpu_ops_per_forward = 4 * s.kernels;
  profile.kernel_time_us_per_forward = 0.97 * s.median_us;
  for (int k = 0; k < s.kernels; ++k) {
    profile.kernels.push_back({s.variant + "_kernel_" + std::to_string(k), "kernel", 1, s.median_us / s.kernels,
                               s.median_us / s.kernels, s.median_us / s.kernels, s.median_us / s.kernels, 7});
  }
  profile.ops = {{"aten::scaled_dot_product_attention", "op", 1, 12.0, 30.0}};
  r.profile = profile;
  return r;
}

// A nightly run of the synthetic sweep into `path`; its noise drawn from `seed`.
std::int64_t write_run(const std::string& path, std::uint64_t seed) {
  storage::RunRecord run;
  run.name = "nightly";
  run.config_path = "configs/nightly.yaml";
  run.config_yaml = "name: nightly\n";
  run.config_sha256 = sha256_hex(run.config_yaml);
  run.environment.device = Device::cuda(0);
  run.environment.device_name = "NVIDIA H200";
  run.environment.torch_version = "2.11.0";
  run.environment.cuda_version = "13.0";
  run.environment.cudnn_version = "91900";
  run.environment.driver_version = "580.65.06";
  run.environment.hostname = "gpu-node-1";
  run.environment.sm_clock_max_mhz = 1980;
  run.environment.power_limit_w = 700;
  run.environment.env_vars = {{"CUDA_VISIBLE_DEVICES", "0"}};
  run.timing_protocol = "cuda_event_v2";
  run.flop_convention = "attended_pairs_v1";
  run.planned_cases = static_cast<int>(synthetic_cases().size());
  storage::Store store(path);
  const std::int64_t run_id = store.begin_run(run);
  std::mt19937_64 random(seed);
  for (std::size_t i = 0; i < synthetic_cases().size(); ++i) {
    const Synthetic& s = synthetic_cases()[i];
    store.add_case(run_id, case_of(s, static_cast<int>(i)), result_of(s, random));
  }
  store.finish_run(run_id, RunStatus::done);
  return run_id;
}

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A finding as "<case label> | <check> <field> <severity>", for exact comparison of sets.
std::multiset<std::string> findings_of(const Comparison& comparison, std::optional<Severity> only = std::nullopt) {
  std::multiset<std::string> found;
  for (const CaseComparison& c : comparison.cases) {
    for (const Finding& f : c.findings) {
      if (only && f.severity != *only) continue;
      found.insert(c.key.label() + " | " + to_string(f.check) + " " + f.field + " " + to_string(f.severity));
    }
  }
  return found;
}

// A finding `comparison` must hold: its case by plan index, and "check field severity".
struct ExpectedFinding {
  int plan_index;
  std::string what;
};

// The findings of `comparison` are exactly `expected` (the comparison as text when not).
void expect_findings(const Comparison& comparison, const std::vector<ExpectedFinding>& expected) {
  std::multiset<std::string> labelled;
  for (const ExpectedFinding& finding : expected) labelled.insert(label_of(finding.plan_index) + " | " + finding.what);
  EXPECT_EQ(findings_of(comparison), labelled) << render(comparison, Format::text);
}

const CaseComparison& case_named(const Comparison& comparison, int plan_index) {
  const std::string label = label_of(plan_index);
  for (const CaseComparison& c : comparison.cases) {
    if (c.key.label() == label) return c;
  }
  throw std::runtime_error("no compared case " + label);
}

class Compare : public ::testing::Test {
 protected:
  void SetUp() override {
    baseline_ = scratch_.path("baseline.db");
    write_run(baseline_, 20261130);
  }

  // A byte copy of the baseline, checkpointed first so that the copy holds every row.
  std::string copy(const std::string& name) {
    { SQLite::Database(baseline_, SQLite::OPEN_READWRITE).exec("PRAGMA wal_checkpoint(TRUNCATE)"); }
    const std::string path = scratch_.path(name);
    fs::copy_file(baseline_, path);
    return path;
  }

  // Runs SQL on a copy: how the tests plant their changes.
  static void plant(const std::string& path, const std::string& sql) {
    SQLite::Database db(path, SQLite::OPEN_READWRITE);
    db.exec(sql);
  }

  // Sets `assignments` (SQL, e.g. "rel_error = 3e-2") on the case of run 1 at `plan_index`.
  static void set_case(const std::string& path, int plan_index, const std::string& assignments) {
    plant(path, "UPDATE cases SET " + assignments + " WHERE case_id = " + case_id(plan_index));
  }

  // case_id of a case of run 1 by its place in the plan.
  static std::string case_id(int plan_index) {
    return "(SELECT case_id FROM cases WHERE run_id = 1 AND plan_index = " + std::to_string(plan_index) + ")";
  }

  // Scales the kept eager samples of a case (and its stored median) by `factor`.
  static void scale_times(const std::string& path, int plan_index, double factor) {
    const std::string f = std::to_string(factor);
    plant(path, "UPDATE samples SET gpu_time_us = gpu_time_us * " + f + " WHERE case_id = " + case_id(plan_index) +
                    "; UPDATE cases SET gpu_time_us_median = gpu_time_us_median * " + f +
                    " WHERE case_id = " + case_id(plan_index));
  }

  Comparison compare(const std::string& candidate, const CompareSettings& settings = {}) const {
    const storage::RunReader base(baseline_), cand(candidate);
    return compare_runs(base, 1, cand, 1, settings);
  }

  attnsweep::testing::ScratchDirectory scratch_{"attnsweep-compare"};
  std::string baseline_;
};

TEST_F(Compare, AnIdenticalCopyReportsNothing) {
  const Comparison comparison = compare(copy("same.db"));
  EXPECT_FALSE(comparison.has_regression());
  EXPECT_EQ(comparison.regressions(), 0);
  EXPECT_EQ(comparison.improvements(), 0);
  EXPECT_EQ(comparison.notes(), 0);
  EXPECT_TRUE(comparison.environment.empty());
  EXPECT_TRUE(comparison.warnings.empty());
  EXPECT_EQ(comparison.cases.size(), synthetic_cases().size());
  EXPECT_EQ(comparison.same_cases(), static_cast<int>(synthetic_cases().size()));
  EXPECT_EQ(comparison.verdict_counts().at(TimeVerdict::same), static_cast<int>(synthetic_cases().size()));
  EXPECT_TRUE(comparison.only_in_baseline.empty() && comparison.only_in_candidate.empty());
  for (const CaseComparison& c : comparison.cases) {
    EXPECT_DOUBLE_EQ(*c.time.ratio, 1.0) << c.key.label();
    EXPECT_DOUBLE_EQ(*c.time.p_value, 1.0) << c.key.label();
    EXPECT_EQ(c.time.baseline_samples, c.time.candidate_samples);
  }
  EXPECT_EQ(headline(comparison), "attnsweep compare: 0 regressions, 0 improvements, 10 same");
}

TEST_F(Compare, TheThrottledSamplesAreLeftOut) {
  const Comparison comparison = compare(copy("same.db"));
  const CaseComparison& flash = case_named(comparison, index_of("sdpa_flash", 1024));
  EXPECT_EQ(flash.time.baseline_samples, 198u);  // 200 stored, 2 throttled
  const storage::RunReader reader(baseline_);
  for (const storage::CaseRow& row : reader.cases(1)) {
    if (row.identity.plan_index != index_of("sdpa_flash", 1024)) continue;
    const std::vector<double> kept = kept_eager_times_us(reader.samples(row.case_id), DeviceKind::cuda);
    EXPECT_EQ(kept.size(), 198u);
    EXPECT_LT(*std::max_element(kept.begin(), kept.end()), 1.2 * 95.9);
  }
}

TEST_F(Compare, ARerunWithFreshNoiseIsTheSame) {
  // The same sweep measured again: other noise from another seed, the same distributions.
  const std::string rerun = scratch_.path("rerun.db");
  write_run(rerun, 7);
  const Comparison comparison = compare(rerun);
  EXPECT_FALSE(comparison.has_regression()) << render(comparison, Format::text);
  EXPECT_EQ(comparison.same_cases(), static_cast<int>(synthetic_cases().size())) << render(comparison, Format::text);
}

TEST_F(Compare, ReportsExactlyThePlantedRegressions) {
  const std::string candidate = copy("candidate.db");
  const int counts = index_of("naive", 1024), backend = index_of("sdpa_auto", 1024);
  const int status = index_of("sdpa_cudnn", 1024), slower = index_of("sdpa_flash", 2048);
  set_case(candidate, counts, "kernels_per_forward = 6");
  set_case(candidate, backend, "sdpa_backend = 'efficient_attention'");
  plant(candidate, "UPDATE cases SET status = 'error', error_message = 'CUDA error: an illegal memory access', "
                   "kernels_per_forward = NULL, memcpy_per_forward = NULL, memset_per_forward = NULL, "
                   "gpu_time_us_median = NULL, rel_error = NULL WHERE case_id = " + case_id(status));
  scale_times(candidate, slower, 1.3);

  const Comparison comparison = compare(candidate);
  EXPECT_TRUE(comparison.has_regression());
  EXPECT_EQ(comparison.regressions(), 4);
  expect_findings(comparison, {{counts, "counts kernels_per_forward regression"},
                               {backend, "backend sdpa_backend regression"},
                               {status, "status status regression"},
                               {slower, "time time regression"}});
  EXPECT_EQ(comparison.same_cases(), static_cast<int>(synthetic_cases().size()) - 4);

  const CaseComparison& slow = case_named(comparison, slower);
  EXPECT_EQ(slow.time.verdict, TimeVerdict::slower);
  EXPECT_NEAR(*slow.time.ratio, 1.3, 1e-9);
  EXPECT_LT(*slow.time.p_value, 1e-30);
  const CaseComparison& failed = case_named(comparison, status);
  EXPECT_EQ(failed.time.verdict, TimeVerdict::not_timed);
  EXPECT_NE(failed.findings.front().detail.find("illegal memory access"), std::string::npos);
  const CaseComparison& counted = case_named(comparison, counts);
  EXPECT_EQ(counted.findings.front().baseline, "5");
  EXPECT_EQ(counted.findings.front().candidate, "6");
  EXPECT_EQ(headline(comparison), "attnsweep compare: 4 regressions, 0 improvements, 6 same");
}

// Energy per pass (schema 11): a change beyond CompareSettings::energy_change (10%)
// is a note with both energies, never a regression or an improvement; under it,
// nothing; on one side only, nothing but the JSON's two values; none beside
// another process (the counter is the whole GPU's). The time stays compare's.
TEST_F(Compare, AnEnergyChangeBeyondTenPercentIsANoteNeverCounted) {
  const std::string candidate = copy("energy.db");
  const int more = index_of("sdpa_flash", 1024), less = index_of("sdpa_cudnn", 1024);
  const int within = index_of("sdpa_efficient", 1024), one_sided = index_of("naive", 1024);
  const int shared = index_of("sdpa_auto", 1024);
  const auto set_energy = [&](const std::string& path, int plan_index, double joules, double watts) {
    plant(path, "UPDATE cases SET energy_j = " + std::to_string(joules) + ", energy_power_w = " +
                    std::to_string(watts) + ", energy_window_s = 0.5, energy_passes = 1000 WHERE case_id = " +
                    case_id(plan_index));
  };
  for (const int plan_index : {more, less, within, shared}) set_energy(baseline_, plan_index, 0.0500, 520);
  set_energy(candidate, more, 0.0600, 600);    // +20%
  set_energy(candidate, less, 0.0400, 420);    // -20%
  set_energy(candidate, within, 0.0540, 560);  // +8%: within the counter's noise
  set_energy(candidate, one_sided, 0.9, 650);  // measured tonight only
  set_energy(candidate, shared, 0.0800, 690);  // +60%, but another process shared the GPU
  set_case(candidate, shared, "other_processes = 1");

  const Comparison comparison = compare(candidate);
  EXPECT_FALSE(comparison.has_regression()) << render(comparison, Format::text);
  EXPECT_EQ(comparison.regressions(), 0);
  EXPECT_EQ(comparison.improvements(), 0);
  expect_findings(comparison, {{more, "energy energy_j info"}, {less, "energy energy_j info"}});
  const CaseComparison& up = case_named(comparison, more);
  ASSERT_EQ(up.findings.size(), 1u);
  EXPECT_EQ(up.findings[0].baseline, "0.0500 J");
  EXPECT_EQ(up.findings[0].candidate, "0.0600 J");
  EXPECT_EQ(up.findings[0].detail,
            "energy per pass +20.0%, average power 520 -> 600 W (beyond 10%; informational: NVML's energy counter)");
  EXPECT_EQ(up.time.verdict, TimeVerdict::same);  // the time is judged as ever
  EXPECT_NEAR(*up.energy.ratio, 1.2, 1e-9);
  EXPECT_EQ(case_named(comparison, less).findings.at(0).detail.substr(0, 22), "energy per pass -20.0%");
  EXPECT_NEAR(*case_named(comparison, within).energy.ratio, 1.08, 1e-9);
  const CaseComparison& tonight_only = case_named(comparison, one_sided);
  EXPECT_FALSE(tonight_only.energy.baseline_j.has_value());
  EXPECT_EQ(tonight_only.energy.candidate_j, 0.9);
  EXPECT_FALSE(tonight_only.energy.ratio.has_value());
  EXPECT_TRUE(case_named(comparison, shared).findings.empty());
  // Notes leave the exit code alone: two cases are not "same", none regressed.
  EXPECT_EQ(comparison.notes(), 2);
  EXPECT_EQ(headline(comparison), "attnsweep compare: 0 regressions, 0 improvements, 8 same, 1 not judged (INCONCLUSIVE)");

  // A wider threshold: no note.
  CompareSettings wide;
  wide.energy_change = 0.25;
  EXPECT_EQ(compare(candidate, wide).notes(), 0);

  // JSON: both energies of every case (null where not measured), the ratio, and the threshold.
  const nlohmann::json json = nlohmann::json::parse(render(comparison, Format::json));
  EXPECT_EQ(json["settings"]["energy_change"], 0.1);
  for (const nlohmann::json& c : json["cases"]) {
    const std::string label = c["key"]["label"];
    const nlohmann::json& energy = c["energy"];
    if (label == label_of(more)) {
      EXPECT_DOUBLE_EQ(energy["baseline_j"].get<double>(), 0.05);
      EXPECT_DOUBLE_EQ(energy["candidate_j"].get<double>(), 0.06);
      EXPECT_DOUBLE_EQ(energy["baseline_power_w"].get<double>(), 520);
      EXPECT_DOUBLE_EQ(energy["candidate_power_w"].get<double>(), 600);
      EXPECT_NEAR(energy["ratio"].get<double>(), 1.2, 1e-9);
      EXPECT_EQ(c["findings"][0]["check"], "energy");
      EXPECT_EQ(c["findings"][0]["severity"], "info");
    } else if (label == label_of(one_sided)) {
      EXPECT_TRUE(energy["baseline_j"].is_null());
      EXPECT_DOUBLE_EQ(energy["candidate_j"].get<double>(), 0.9);
      EXPECT_TRUE(energy["ratio"].is_null());
    } else if (label == label_of(index_of("sdpa_math", 1024))) {
      EXPECT_EQ(energy, nlohmann::json({{"baseline_j", nullptr}, {"candidate_j", nullptr}, {"baseline_power_w", nullptr},
                                        {"candidate_power_w", nullptr}, {"ratio", nullptr}}));
    }
  }
  // Text: the finding's row, counted as a note.
  const std::string text = render(comparison, Format::text);
  EXPECT_NE(text.find("  energy  energy_j  0.0500 J  0.0600 J   note    energy per pass +20.0%, average power 520 -> 600 W"),
            std::string::npos)
      << text;
  EXPECT_NE(render(comparison, Format::markdown).find("| energy info | 2 |"), std::string::npos);
}

// DRAM bytes per pass (hardware counters, schema 21): beyond CompareSettings::bytes_change
// (10%) a note with both sides and the time's change beside; under it, or read on one side
// only, nothing. Never a regression: the time's verdict stays compare's.
TEST_F(Compare, ADramBytesChangeBeyondTenPercentIsANoteBesideTheTime) {
  const std::string candidate = copy("bytes.db");
  const int doubled = index_of("sdpa_flash", 1024), within = index_of("sdpa_cudnn", 1024);
  const int one_sided = index_of("naive", 1024);
  const auto set_bytes = [&](const std::string& path, int plan_index, double read, double written) {
    plant(path, "UPDATE cases SET dram_read_bytes = " + std::to_string(read) + ", dram_write_bytes = " +
                    std::to_string(written) + " WHERE case_id = " + case_id(plan_index));
  };
  for (const int plan_index : {doubled, within}) set_bytes(baseline_, plan_index, 50.35e6, 8.72e6);
  set_bytes(candidate, doubled, 100.70e6, 17.44e6);  // +100%
  set_bytes(candidate, within, 53.0e6, 8.72e6);       // +4.5%
  set_bytes(candidate, one_sided, 5e8, 1e8);          // read tonight only

  const Comparison comparison = compare(candidate);
  EXPECT_EQ(comparison.regressions(), 0) << render(comparison, Format::text);
  expect_findings(comparison, {{doubled, "dram_bytes dram_bytes info"}});
  const CaseComparison& up = case_named(comparison, doubled);
  ASSERT_EQ(up.findings.size(), 1u);
  EXPECT_EQ(up.findings[0].baseline, "59.07 MB");
  EXPECT_EQ(up.findings[0].candidate, "118.14 MB");
  EXPECT_EQ(up.findings[0].detail.substr(0, 36), "DRAM bytes per pass +100.0%, time +0");
  EXPECT_NE(up.findings[0].detail.find("(beyond 10%; informational: hardware counters, measure.counters)"),
            std::string::npos);
  EXPECT_EQ(up.time.verdict, TimeVerdict::same);
  EXPECT_TRUE(case_named(comparison, within).findings.empty());
  EXPECT_TRUE(case_named(comparison, one_sided).findings.empty());
  CompareSettings wide;
  wide.bytes_change = 2.0;
  EXPECT_EQ(compare(candidate, wide).notes(), 0);
}

// Kernel-level differences (docs/compare.md, "Kernel differences") go with a
// count, backend or time change, and with nothing else: not a status change,
// an AMBIGUOUS time, a numerics change, or a SAME case.
TEST_F(Compare, KernelDifferencesGoWithCountBackendAndTimeChangesOnly) {
  const std::string candidate = copy("kernels.db");
  const int counts = index_of("naive", 1024), backend = index_of("sdpa_auto", 1024);
  const int slower = index_of("sdpa_flash", 2048), status = index_of("sdpa_cudnn", 1024);
  const int mix = index_of("sdpa_efficient", 1024), numerics = index_of("sdpa_math", 1024);
  const int capped = index_of("sdpa_efficient", 2048, Dtype::fp32);
  // One more launch of a new kernel.
  plant(candidate, "UPDATE cases SET kernels_per_forward = 6 WHERE case_id = " + case_id(counts) +
                       "; INSERT INTO kernels (case_id, name, kind, launches_per_forward, total_us, mean_us, min_us, "
                       "max_us, grid, block, registers_per_thread, shared_memory_bytes, est_occupancy_pct) VALUES (" +
                       case_id(counts) + ", 'void at::native::copy_kernel<c10::BFloat16>(int)', 'kernel', 1, 50, 50, "
                       "50, 50, '[4096, 1, 1]', '[128, 1, 1]', 32, 0, 100)");
  // Another backend: its kernel has another name.
  plant(candidate, "UPDATE cases SET sdpa_backend = 'efficient_attention' WHERE case_id = " + case_id(backend) +
                       "; UPDATE kernels SET name = 'fmha_cutlassF_bf16_aligned_64x64_rf_sm80' WHERE case_id = " +
                       case_id(backend));
  scale_times(candidate, slower, 1.3);
  plant(candidate, "UPDATE cases SET status = 'error', error_message = 'CUDA error', kernels_per_forward = NULL, "
                   "memcpy_per_forward = NULL, memset_per_forward = NULL WHERE case_id = " + case_id(status) +
                   "; DELETE FROM kernels WHERE case_id = " + case_id(status));
  plant(candidate, "UPDATE samples SET gpu_time_us = gpu_time_us * CASE WHEN sample_index % 10 < 3 THEN 0.9 ELSE 1.3 "
                   "END WHERE case_id = " + case_id(mix));
  set_case(candidate, numerics, "rel_error = 0.5");
  scale_times(candidate, capped, 1.07);
  set_case(candidate, capped, "power_cap_share = 0.85");

  const Comparison comparison = compare(candidate);
  ASSERT_EQ(case_named(comparison, mix).time.verdict, TimeVerdict::ambiguous);
  ASSERT_TRUE(case_named(comparison, capped).time.marked());
  std::set<std::string> explained;
  for (const CaseComparison& c : comparison.cases) {
    if (c.kernels) explained.insert(c.key.label());
  }
  EXPECT_EQ(explained,
            (std::set<std::string>{label_of(counts), label_of(backend), label_of(slower), label_of(capped)}));
  EXPECT_EQ(comparison.kernel_difference_cases(), 4);

  // The count: the new kernel, and none of the five that stayed (their shares moved 3 points).
  const KernelDifferences& added = *case_named(comparison, counts).kernels;
  EXPECT_EQ(added.added, 1);
  EXPECT_EQ(added.unchanged, 5);
  ASSERT_EQ(added.kernels.size(), 1u);
  EXPECT_EQ(added.kernels[0].name, "void at::native::copy_kernel<c10::BFloat16>(int)");
  EXPECT_EQ(added.kernels[0].short_name, "copy_kernel<BFloat16>");
  EXPECT_EQ(added.kernels[0].candidate->grid, "[4096,1,1]");
  // The backend: one kernel for another.
  const KernelDifferences& swapped = *case_named(comparison, backend).kernels;
  EXPECT_EQ(swapped.removed, 1);
  EXPECT_EQ(swapped.added, 1);
  // The time alone: the kernels that hold it, as they were.
  const KernelDifferences& slow = *case_named(comparison, slower).kernels;
  EXPECT_TRUE(slow.top_by_time);
  ASSERT_EQ(slow.kernels.size(), 1u);
  EXPECT_EQ(slow.kernels[0].name, "sdpa_flash_kernel_0");
  EXPECT_EQ(slow.kernels[0].change, KernelChange::unchanged);
  EXPECT_TRUE(case_named(comparison, capped).kernels->top_by_time);

  const std::string text = render(comparison, Format::text);
  EXPECT_NE(text.find("\nKernel differences (4 cases; "), std::string::npos) << text;
  EXPECT_NE(text.find("\n" + label_of(slower) + ": 1 kernel (1 unchanged), the top 1 by time share shown; kernel time "),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\n" + label_of(counts) + ": 6 kernels (1 added, 5 unchanged); kernel time 1062.2 -> 1112.2 us "
                                                "per pass\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\n  added   copy_kernel<BFloat16>  0 -> 1    50.0     4.5%   [4096,1,1]  [128,1,1]  32 "),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\n  same    sdpa_flash_kernel_0  1         341.7 -> 341.7  100.0% -> 100.0%"), std::string::npos)
      << text;
  EXPECT_EQ(text.find(label_of(mix) + ": "), std::string::npos) << text;
  const nlohmann::json json = nlohmann::json::parse(render(comparison, Format::json));
  EXPECT_EQ(json["summary"]["kernel_differences"], 4);
  EXPECT_TRUE(json["cases"][mix]["kernel_differences"].is_null());
  EXPECT_TRUE(json["cases"][status]["kernel_differences"].is_null());
  EXPECT_EQ(json["cases"][slower]["kernel_differences"]["top_by_time"], true);
  EXPECT_EQ(json["cases"][slower]["kernel_differences"]["kernels"][0]["change"], "unchanged");
}

// A case that swapped many kernels lists a dozen in text and eight in markdown;
// the JSON lists them all.
TEST_F(Compare, KernelDifferencesStayShortInTextAndMarkdown) {
  const std::string candidate = copy("many.db");
  const int naive = index_of("naive", 1024);
  std::string sql = "UPDATE cases SET kernels_per_forward = 20 WHERE case_id = " + case_id(naive);
  for (int k = 0; k < 15; ++k) {
    sql += "; INSERT INTO kernels (case_id, name, kind, launches_per_forward, total_us, mean_us, min_us, max_us) "
           "VALUES (" + case_id(naive) + ", 'extra_kernel_" + std::to_string(k) + "', 'kernel', 1, " +
           std::to_string(15 - k) + ", 1, 1, 1)";
  }
  plant(candidate, sql);
  const Comparison comparison = compare(candidate);
  const CaseComparison& c = case_named(comparison, naive);
  ASSERT_TRUE(c.kernels);
  EXPECT_EQ(c.kernels->kernels.size(), 15u);  // the 15 added (1 to 15 us); the 5 others' shares moved 2 points
  const std::string text = render(comparison, Format::text);
  EXPECT_NE(text.find("  added   extra_kernel_11 "), std::string::npos) << text;
  EXPECT_EQ(text.find("extra_kernel_12"), std::string::npos) << text;
  EXPECT_NE(text.find("  ... and 3 more kernels (--format json lists them all)\n"), std::string::npos) << text;
  const std::string markdown = render(comparison, Format::markdown);
  EXPECT_NE(markdown.find("| added | extra_kernel_7 |"), std::string::npos) << markdown;
  EXPECT_EQ(markdown.find("extra_kernel_8"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("\n... and 7 more kernels (--format json lists them all)\n"), std::string::npos) << markdown;
  const nlohmann::json json = nlohmann::json::parse(render(comparison, Format::json));
  EXPECT_EQ(json["cases"][naive]["kernel_differences"]["kernels"].size(), 15u);
}

TEST_F(Compare, TheOtherWayRoundTheStatusChangeIsAnImprovement) {
  const std::string broken = copy("broken.db");
  plant(broken, "UPDATE cases SET status = 'oom', error_message = 'CUDA out of memory' WHERE case_id = " +
                    case_id(index_of("sdpa_math", 1024)));
  const storage::RunReader fixed(baseline_), before(broken);
  const Comparison comparison = compare_runs(before, 1, fixed, 1, {});
  EXPECT_FALSE(comparison.has_regression());
  expect_findings(comparison, {{index_of("sdpa_math", 1024), "status status improvement"}});
}

TEST_F(Compare, AStatusChangeBetweenFailuresIsReportedNotCounted) {
  const std::string before = copy("before.db"), after = copy("after.db");
  const int math = index_of("sdpa_math", 1024);
  set_case(before, math, "status = 'unsupported'");
  set_case(after, math, "status = 'oom'");
  const storage::RunReader a(before), b(after);
  const Comparison comparison = compare_runs(a, 1, b, 1, {});
  EXPECT_FALSE(comparison.has_regression());
  expect_findings(comparison, {{math, "status status info"}});
}

TEST_F(Compare, ATwoPercentShiftIsSame) {
  const std::string candidate = copy("shift.db");
  const int flash = index_of("sdpa_flash", 1024);
  scale_times(candidate, flash, 1.02);
  const Comparison comparison = compare(candidate);
  EXPECT_FALSE(comparison.has_regression());
  const CaseComparison& c = case_named(comparison, flash);
  EXPECT_EQ(c.time.verdict, TimeVerdict::same);
  EXPECT_NEAR(*c.time.ratio, 1.02, 1e-9);
  EXPECT_LT(*c.time.p_value, 1e-3);  // significant, but under the threshold: SAME
  EXPECT_TRUE(c.findings.empty());
}

TEST_F(Compare, TheThresholdIsASetting) {
  const std::string candidate = copy("shift.db");
  const int flash = index_of("sdpa_flash", 1024);
  scale_times(candidate, flash, 1.02);
  CompareSettings tight;
  tight.threshold = 0.01;
  // 2% of 95.9 us is 1.9 us: under the default floor of 2 us it stays SAME.
  EXPECT_EQ(case_named(compare(candidate, tight), flash).time.verdict, TimeVerdict::same);
  tight.min_change_us = 0;
  const Comparison comparison = compare(candidate, tight);
  EXPECT_EQ(case_named(comparison, flash).time.verdict, TimeVerdict::slower);
  EXPECT_NEAR(*case_named(comparison, flash).time.quantile_ratio, 1.02, 1e-9);
  EXPECT_EQ(comparison.regressions(), 1);
}

// Seen between identical nights on the H200 (docs/compare.md): the median of a
// case moved +5.3% because more of its samples fell into a slow mode, while the
// fast mode (the 10th percentile) stayed where it was. That is AMBIGUOUS, not
// SLOWER: the kernel did not get slower, the mix of samples changed.
TEST_F(Compare, AMedianMovedByAChangedMixOfSamplesIsAmbiguousNotSlower) {
  const std::string candidate = copy("mix.db");
  const int flash = index_of("sdpa_flash", 2048);
  // The slower 60% of the samples 12% slower; the fastest 40% as they were.
  plant(candidate, "UPDATE samples SET gpu_time_us = gpu_time_us * 1.12 WHERE case_id = " + case_id(flash) +
                       " AND mode = 'eager' AND gpu_time_us >= (SELECT gpu_time_us FROM samples WHERE case_id = " +
                       case_id(flash) + " AND mode = 'eager' ORDER BY gpu_time_us LIMIT 1 OFFSET (SELECT count(*) * 4 / 10 "
                       "FROM samples WHERE mode = 'eager' AND case_id = " + case_id(flash) + "))");
  const Comparison comparison = compare(candidate);
  const CaseComparison& c = case_named(comparison, flash);
  EXPECT_EQ(c.time.verdict, TimeVerdict::ambiguous) << c.time.reason;
  EXPECT_GT(*c.time.ratio, 1.05);
  EXPECT_LT(*c.time.p_value, 1e-3);
  EXPECT_NEAR(*c.time.quantile_ratio, 1.0, 1e-9);
  EXPECT_NE(c.time.reason.find("the mix of fast and slow samples changed"), std::string::npos) << c.time.reason;
  EXPECT_FALSE(comparison.has_regression());
}

// A kernel of 16 us that came out 1.2 us slower in another process with nothing
// changed (H200, decoding) is under the 2 us floor: SAME. Twice as slow is not.
TEST_F(Compare, ChangesUnderTheMicrosecondFloorAreSame) {
  const std::string candidate = copy("floor.db");
  const int flash = index_of("sdpa_flash", 1024);
  // Make the case a 16 us kernel on both sides, then 7.5% (1.2 us) slower in the candidate.
  plant(baseline_, "UPDATE samples SET gpu_time_us = gpu_time_us / 6 WHERE case_id = " + case_id(flash));
  plant(candidate, "UPDATE samples SET gpu_time_us = gpu_time_us / 6 * 1.075 WHERE case_id = " + case_id(flash));
  Comparison comparison = compare(candidate);
  EXPECT_EQ(case_named(comparison, flash).time.verdict, TimeVerdict::same);
  plant(candidate, "UPDATE samples SET gpu_time_us = gpu_time_us * 2 WHERE case_id = " + case_id(flash));
  comparison = compare(candidate);
  EXPECT_EQ(case_named(comparison, flash).time.verdict, TimeVerdict::slower);
  EXPECT_EQ(comparison.regressions(), 1);
}

TEST_F(Compare, ThirtyPercentOnThreeSamplesIsAmbiguous) {
  const std::string candidate = copy("three.db");
  const int cudnn = index_of("sdpa_cudnn", 1024);
  plant(candidate, "DELETE FROM samples WHERE case_id = " + case_id(cudnn) + " AND sample_index >= 3");
  scale_times(candidate, cudnn, 1.3);
  const Comparison comparison = compare(candidate);
  EXPECT_FALSE(comparison.has_regression());
  const CaseComparison& c = case_named(comparison, cudnn);
  EXPECT_EQ(c.time.verdict, TimeVerdict::ambiguous);
  EXPECT_EQ(c.time.candidate_samples, 3u);
  EXPECT_NE(c.time.reason.find("fewer than 5 kept samples"), std::string::npos) << c.time.reason;
  expect_findings(comparison, {{cudnn, "time time info"}});
  EXPECT_EQ(headline(comparison), "attnsweep compare: 0 regressions, 0 improvements, 9 same, 1 ambiguous");
}

TEST_F(Compare, ASmallNoisyChangeBeyondTheThresholdIsAmbiguous) {
  // 6% slower medians on 8 samples spread +-10%: beyond the threshold, not significant.
  const std::string candidate = copy("noisy.db");
  const int math = index_of("sdpa_math", 1024);
  const std::string id = case_id(math);
  plant(candidate, "DELETE FROM samples WHERE case_id = " + id + " AND sample_index >= 8");
  const std::vector<double> spread = {0.90, 1.10, 0.95, 1.05, 1.20, 0.85, 1.15, 1.0};
  for (std::size_t i = 0; i < spread.size(); ++i) {
    plant(candidate, "UPDATE samples SET gpu_time_us = 2609.4 * " + std::to_string(spread[i] * 1.06) +
                         ", throttled = 0 WHERE case_id = " + id + " AND sample_index = " + std::to_string(i));
  }
  const Comparison comparison = compare(candidate);
  const CaseComparison& c = case_named(comparison, math);
  EXPECT_EQ(c.time.verdict, TimeVerdict::ambiguous) << render(comparison, Format::text);
  EXPECT_GT(*c.time.p_value, 1e-3);
  EXPECT_NE(c.time.reason.find("not significant"), std::string::npos) << c.time.reason;
  EXPECT_FALSE(comparison.has_regression());
}

TEST_F(Compare, APowerCapDifferenceMarksTheVerdictAndDoesNotFail) {
  const std::string candidate = copy("capped.db");
  const int flash = index_of("sdpa_flash", 2048);
  scale_times(candidate, flash, 1.07);
  set_case(candidate, flash, "power_cap_share = 0.85");
  const Comparison comparison = compare(candidate);
  const CaseComparison& c = case_named(comparison, flash);
  EXPECT_EQ(c.time.verdict, TimeVerdict::slower);
  EXPECT_TRUE(c.time.marked());
  EXPECT_EQ(c.time.cap_mark, "power-capped 85% vs 5% of samples (candidate vs baseline)");
  EXPECT_FALSE(comparison.has_regression());
  EXPECT_EQ(comparison.marked_cases(), 1);
  expect_findings(comparison, {{flash, "time time info"}});
  EXPECT_NE(render(comparison, Format::text).find("MARKED"), std::string::npos);

  // Without the cap difference the same slowdown is a regression.
  set_case(candidate, flash, "power_cap_share = 0.05");
  EXPECT_TRUE(compare(candidate).has_regression());
}

TEST_F(Compare, AThermalCapDifferenceMarksTooAndAnUnknownShareDoesNot) {
  const std::string candidate = copy("thermal.db");
  const int flash = index_of("sdpa_flash", 2048);
  scale_times(candidate, flash, 1.10);
  set_case(candidate, flash, "thermal_cap_share = 0.5");
  EXPECT_EQ(case_named(compare(candidate), flash).time.cap_mark,
            "thermally slowed 50% vs 0% of samples (candidate vs baseline)");
  plant(candidate, "UPDATE cases SET thermal_cap_share = NULL, power_cap_share = NULL WHERE case_id = " +
                       case_id(flash));
  const Comparison unknown = compare(candidate);
  EXPECT_FALSE(case_named(unknown, flash).time.marked());
  EXPECT_TRUE(unknown.has_regression());
}

TEST_F(Compare, NumericsBeyondTheDtypeTolerance) {
  const std::string before = copy("before.db"), after = copy("after.db");
  const int naive = index_of("naive", 1024), fp16 = index_of("sdpa_auto", 2048, Dtype::fp16);
  const int fp32 = index_of("sdpa_efficient", 2048, Dtype::fp32), flash = index_of("sdpa_flash", 1024);
  const int math = index_of("sdpa_math", 1024);
  // bf16 within 1.6e-2 before, 3e-2 now: a regression.
  set_case(after, naive, "rel_error = 3e-2");
  // fp16 beyond 2e-3 on both sides, 1.5x worse: not a regression; 2.5x worse on fp32: one.
  set_case(before, fp16, "rel_error = 4e-3");
  set_case(after, fp16, "rel_error = 6e-3");
  set_case(before, fp32, "rel_error = 2e-4");
  set_case(after, fp32, "rel_error = 5e-4");
  // Beyond before, within now: an improvement.
  set_case(before, flash, "rel_error = 5e-2");
  // No rel_error now (a non-finite output): a note.
  set_case(after, math, "rel_error = NULL");
  const storage::RunReader a(before), b(after);
  const Comparison comparison = compare_runs(a, 1, b, 1, {});
  expect_findings(comparison, {{naive, "numerics rel_error regression"},
                               {fp32, "numerics rel_error regression"},
                               {flash, "numerics rel_error improvement"},
                               {math, "numerics rel_error info"}});
}

// Issue 36: an fp8 case's rel_error is the quantisation's, the same on both
// sides; a kernel whose own error doubled is seen in rel_error_dequantized.
TEST_F(Compare, AnFp8KernelsOwnErrorDoublingIsARegressionThatRelErrorCannotShow) {
  const std::string before = copy("fp8-before.db"), after = copy("fp8-after.db");
  const int doubled = index_of("sdpa_flash", 1024), small = index_of("naive", 1024), gone = index_of("sdpa_math", 1024);
  for (const std::string& db : {before, after}) {
    plant(db, "UPDATE cases SET dtype = 'fp8_e4m3', rel_error = 5.0e-2 WHERE case_id IN (" + case_id(doubled) + ", " +
                  case_id(small) + ", " + case_id(gone) + ")");
  }
  set_case(before, doubled, "rel_error_dequantized = 2.0e-2");
  set_case(after, doubled, "rel_error = 5.4e-2, rel_error_dequantized = 4.5e-2");
  // 2.5x worse, but within the bf16 tolerance (an emulation computing in bf16): no finding.
  set_case(before, small, "rel_error_dequantized = 3.0e-3");
  set_case(after, small, "rel_error_dequantized = 7.5e-3");
  set_case(before, gone, "rel_error_dequantized = 3.0e-3");
  const storage::RunReader a(before), b(after);
  const Comparison comparison = compare_runs(a, 1, b, 1, {});
  const auto fp8_label = [](int plan_index) {
    std::string label = label_of(plan_index);
    return label.replace(label.find(" bf16 "), 6, " fp8_e4m3 ");
  };
  EXPECT_EQ(findings_of(comparison),
            (std::multiset<std::string>{fp8_label(doubled) + " | numerics rel_error_dequantized regression",
                                        fp8_label(gone) + " | numerics rel_error_dequantized info"}))
      << render(comparison, Format::text);
  EXPECT_TRUE(comparison.has_regression());
  EXPECT_NE(render(comparison, Format::text).find("2.0e-02"), std::string::npos);
  const std::string json = render(comparison, Format::json);
  EXPECT_NE(json.find("\"fp8_e4m3\": 0.1"), std::string::npos) << json.substr(0, 2000);
  EXPECT_NE(json.find("\"fp8_e5m2\": 0.2"), std::string::npos);
}

TEST_F(Compare, CasesOnOneSideAreListed) {
  const std::string candidate = copy("moved.db");
  const int moved = index_of("naive_inplace", 1024);
  set_case(candidate, moved, "seq_len_q = 4096, seq_len_kv = 4096");
  const Comparison comparison = compare(candidate);
  EXPECT_FALSE(comparison.has_regression());
  ASSERT_EQ(comparison.only_in_baseline.size(), 1u);
  ASSERT_EQ(comparison.only_in_candidate.size(), 1u);
  EXPECT_EQ(comparison.only_in_baseline[0].label(), "naive_inplace 8x16x1024x64 bf16 causal cuda");
  EXPECT_EQ(comparison.only_in_candidate[0].label(), "naive_inplace 8x16x4096x64 bf16 causal cuda");
  EXPECT_EQ(comparison.cases.size(), synthetic_cases().size() - 1);
  EXPECT_NE(render(comparison, Format::text).find("Only in the candidate (1):\n  naive_inplace 8x16x4096x64"),
            std::string::npos);
}

// Issue 23: the pass is part of what a case measures. A backward is never
// matched with the forward of the same variant and shape, and both are keyed apart.
TEST_F(Compare, RunsThatDifferOnlyByThePassAreNotMatched) {
  const std::string candidate = copy("backward.db");
  plant(candidate, "UPDATE cases SET pass = 'backward'");
  const Comparison comparison = compare(candidate);
  EXPECT_TRUE(comparison.cases.empty());
  EXPECT_FALSE(comparison.has_regression());
  ASSERT_EQ(comparison.only_in_baseline.size(), synthetic_cases().size());
  ASSERT_EQ(comparison.only_in_candidate.size(), synthetic_cases().size());
  const int naive = index_of("naive_inplace", 1024);
  EXPECT_EQ(comparison.only_in_baseline[static_cast<std::size_t>(naive)].label(),
            "naive_inplace 8x16x1024x64 bf16 causal cuda");
  EXPECT_EQ(comparison.only_in_candidate[static_cast<std::size_t>(naive)].label(),
            "naive_inplace 8x16x1024x64 bf16 causal backward cuda");
  EXPECT_EQ(comparison.only_in_candidate[0].pass, Pass::backward);
  EXPECT_FALSE(comparison.only_in_candidate[0] == comparison.only_in_baseline[0]);

  // One case's pass changed: that case alone is unmatched, the rest compare as before.
  const std::string one = copy("one-backward.db");
  set_case(one, naive, "pass = 'forward_backward'");
  const Comparison partly = compare(one);
  EXPECT_EQ(partly.cases.size(), synthetic_cases().size() - 1);
  ASSERT_EQ(partly.only_in_candidate.size(), 1u);
  EXPECT_EQ(partly.only_in_candidate[0].label(), "naive_inplace 8x16x1024x64 bf16 causal forward_backward cuda");
  EXPECT_NE(render(partly, Format::json).find("\"pass\": \"forward_backward\""), std::string::npos);
}

TEST_F(Compare, EnvironmentDifferencesComeFirstAndNeverFail) {
  const std::string candidate = copy("env.db");
  plant(candidate, "UPDATE runs SET git_sha = 'f00dfeedbeef', driver_version = '580.82.07', "
                   "env_vars = '{\"CUDA_VISIBLE_DEVICES\":\"1\",\"TORCH_CUDNN_V8_API_LRU_CACHE_LIMIT\":\"100\"}'");
  const Comparison comparison = compare(candidate);
  EXPECT_FALSE(comparison.has_regression());
  EXPECT_TRUE(comparison.warnings.empty());
  std::map<std::string, std::pair<std::string, std::string>> facts;
  for (const EnvironmentDifference& d : comparison.environment) facts[d.fact] = {d.baseline, d.candidate};
  EXPECT_EQ(facts.size(), 4u);
  EXPECT_EQ(facts["driver_version"], std::make_pair(std::string("580.65.06"), std::string("580.82.07")));
  EXPECT_EQ(facts["git_sha"].second, "f00dfeedbeef");
  EXPECT_EQ(facts["env_vars.CUDA_VISIBLE_DEVICES"], std::make_pair(std::string("0"), std::string("1")));
  EXPECT_EQ(facts["env_vars.TORCH_CUDNN_V8_API_LRU_CACHE_LIMIT"],
            std::make_pair(std::string("(unset)"), std::string("100")));
  const std::string text = render(comparison, Format::text);
  EXPECT_LT(text.find("Environment: 4 facts differ"), text.find("Findings: none")) << text;
}

// Every run fact differing at once, on two GPU runs: reported in the order and
// with the text compare has always given them (issue 56 moved the list onto the
// runs columns, storage::run_facts()); timing_protocol and measure_regime break timing.
TEST(CompareRunFacts, EveryFactIsReportedInItsOrderWithItsStoredText) {
  storage::RunRow a, b;
  a.device = Device::parse("cuda:0");
  b.device = Device::parse("cuda:1");
  const auto set = [](storage::RunRow& r, int i) {
    const std::string n = std::to_string(i);
    r.device_name = "gpu" + n, r.driver_version = "d" + n, r.cuda_version = "c" + n, r.cudnn_version = "n" + n;
    r.torch_version = "t" + n, r.attnsweep_version = "v" + n, r.git_sha = "g" + n, r.container_image = "i" + n;
    r.op_libraries = "o" + n, r.hostname = "h" + n, r.timing_protocol = "p" + n, r.measure_regime = "r" + n;
    r.flop_convention = "f" + n, r.config_sha256 = "s" + n, r.power_limit_w = 700.5 + i, r.sm_clock_max_mhz = 1980 + i;
    r.sm_clock_start_mhz = 1000.25 + i, r.mem_clock_start_mhz = 2619 + i, r.temperature_start_c = 30 + i;
    r.seed = 7 + static_cast<std::uint64_t>(i), r.isolate = i == 1, r.case_order = i == 1 ? CaseOrder::shuffled : CaseOrder::plan;
    r.gpus = "cuda:" + n, r.l2_flush = i == 1, r.cuda_graph = i == 1, r.hide_launch_latency = i == 1;
    r.throttle_fraction = 0.9 + 0.01 * i, r.min_gpu_seconds = 0.5 + i, r.warmup = 3 + i, r.profiled_forwards = 1 + i;
    r.min_samples = 10 + i, r.max_samples = 100 + i, r.target_rel_stdev = 0.02 + 0.01 * i, r.max_case_seconds = 30 + i;
    r.burst_cooldown_max_ms = 250 + i, r.clock_event_reasons_start = 4u + static_cast<std::uint64_t>(i);
  };
  set(a, 0);
  set(b, 1);
  const std::vector<EnvironmentDifference> differences = environment_differences({"a.db", a}, {"b.db", b});
  std::vector<std::string> names, texts;
  for (const EnvironmentDifference& d : differences) {
    names.push_back(d.fact);
    texts.push_back(d.baseline + "|" + d.candidate);
    EXPECT_EQ(d.breaks_timing, d.fact == "timing_protocol" || d.fact == "measure_regime") << d.fact;
  }
  EXPECT_EQ(names, (std::vector<std::string>{
                       "device", "device_name", "driver_version", "cuda_version", "cudnn_version", "torch_version",
                       "attnsweep_version", "git_sha", "container_image", "op_libraries", "hostname", "timing_protocol",
                       "measure_regime", "flop_convention", "config_sha256", "power_limit_w", "sm_clock_max_mhz",
                       "sm_clock_start_mhz", "mem_clock_start_mhz", "temperature_start_c", "seed", "isolate",
                       "case_order", "gpus", "l2_flush", "cuda_graph", "hide_launch_latency", "throttle_fraction",
                       "min_gpu_seconds", "warmup", "profiled_forwards", "min_samples", "max_samples",
                       "target_rel_stdev", "max_case_seconds", "burst_cooldown_max_ms", "clock_event_reasons_start"}));
  EXPECT_EQ(texts, (std::vector<std::string>{
                       "cuda:0|cuda:1", "gpu0|gpu1", "d0|d1", "c0|c1", "n0|n1", "t0|t1", "v0|v1", "g0|g1", "i0|i1",
                       "o0|o1", "h0|h1", "p0|p1", "r0|r1", "f0|f1", "s0|s1", "700.5|701.5", "1980|1981",
                       "1000.25|1001.25", "2619|2620", "30|31", "7|8", "0|1", "plan|shuffled", "cuda:0|cuda:1",
                       "0|1", "0|1", "0|1", "0.9|0.91", "0.5|1.5", "3|4", "1|2", "10|11", "100|101", "0.02|0.03",
                       "30|31", "250|251", "4|5"}));
  // On the CPU the GPU's facts are left out, and the run's empty text columns are "".
  a.device = b.device = Device::cpu();
  names.clear();
  for (const EnvironmentDifference& d : environment_differences({"a.db", a}, {"b.db", b})) names.push_back(d.fact);
  EXPECT_EQ(std::count(names.begin(), names.end(), "power_limit_w"), 0);
  EXPECT_EQ(std::count(names.begin(), names.end(), "measure_regime"), 0);
  EXPECT_EQ(std::count(names.begin(), names.end(), "burst_cooldown_max_ms"), 0);
  EXPECT_EQ(names.size(), 37u - 9u);
}

TEST_F(Compare, AMultiLineErrorMessageStaysOnItsRow) {
  // PyTorch's messages span lines; a line break would split the text report's row.
  const std::string candidate = copy("error.db");
  plant(candidate, "UPDATE cases SET status = 'error', error_message = 'CUDA error: an illegal memory access\n"
                   "  Compile with TORCH_USE_CUDA_DSA | to enable\r\n\nlast line  ' WHERE plan_index = 2");
  const Comparison comparison = compare(candidate);
  const CaseComparison& failed = case_named(comparison, 2);
  ASSERT_EQ(failed.findings.size(), 1u);
  EXPECT_EQ(failed.findings[0].detail, "ran in the baseline, error now: CUDA error: an illegal memory access "
                                       "Compile with TORCH_USE_CUDA_DSA | to enable last line  ");
  const std::string text = render(comparison, Format::text);
  const std::size_t row = text.find(label_of(2));
  ASSERT_NE(row, std::string::npos) << text;
  EXPECT_NE(text.find("last line", row), std::string::npos);
  EXPECT_LT(text.find("last line", row), text.find('\n', row)) << text;
}

TEST_F(Compare, EnvVarsNotRecordedBeforeSchemaSevenAreNotCalledUnset) {
  // A run migrated from schema 6 has env_vars NULL: nothing is known about its
  // variables, which is not the same as "(unset)".
  const std::string candidate = copy("old.db");
  plant(candidate, "UPDATE runs SET env_vars = NULL");
  const Comparison comparison = compare(candidate);
  std::map<std::string, std::pair<std::string, std::string>> facts;
  for (const EnvironmentDifference& d : comparison.environment) facts[d.fact] = {d.baseline, d.candidate};
  EXPECT_EQ(facts.size(), 1u);
  EXPECT_EQ(facts["env_vars"], std::make_pair(std::string("{\"CUDA_VISIBLE_DEVICES\":\"0\"}"),
                                              std::string("(not recorded)")));
  EXPECT_EQ(facts.count("env_vars.CUDA_VISIBLE_DEVICES"), 0u);
}

TEST_F(Compare, TheSameRunOnBothSidesIsAWarning) {
  const storage::RunReader reader(baseline_);
  const Comparison itself = compare_runs(reader, 1, reader, 1, {});
  ASSERT_EQ(itself.warnings.size(), 1u);
  EXPECT_EQ(itself.warnings[0], "the baseline and the candidate are the same run (" + baseline_ +
                                    " run 1): nothing can differ");
  // Another path to the same file is the same run too.
  const storage::RunReader other_path(scratch_.path(".") + "/baseline.db");
  EXPECT_EQ(compare_runs(reader, 1, other_path, 1, {}).warnings.size(), 1u);
  EXPECT_TRUE(compare(copy("copy.db")).warnings.empty());
}

// P(U >= u) by the plain recursion c(i, j, k) = c(i-1, j, k-j) + c(i, j-1, k), for small sizes.
double reference_upper_tail(int m, int n, int u) {
  std::vector<std::vector<std::vector<double>>> c(
      m + 1, std::vector<std::vector<double>>(n + 1, std::vector<double>(m * n + 1, 0.0)));
  for (int i = 0; i <= m; ++i) {
    for (int j = 0; j <= n; ++j) {
      for (int k = 0; k <= i * j; ++k) {
        if (i == 0 || j == 0) {
          c[i][j][k] = k == 0 ? 1 : 0;
          continue;
        }
        c[i][j][k] = (k >= j ? c[i - 1][j][k - j] : 0) + c[i][j - 1][k];
      }
    }
  }
  double tail = 0, total = 0;
  for (int k = 0; k <= m * n; ++k) {
    total += c[m][n][k];
    if (k >= u) tail += c[m][n][k];
  }
  return tail / total;
}

TEST(MannWhitneyExact, TheTailAgreesWithThePlainRecursion) {
  for (int m : {1, 2, 5, 8}) {
    for (int n : {1, 3, 8, 40}) {
      for (int u = 0; u <= m * n; ++u) {
        const double expected = reference_upper_tail(m, n, u);
        EXPECT_NEAR(mann_whitney_exact_upper_tail(m, n, u), expected, 1e-12 * expected + 1e-300)
            << m << " " << n << " " << u;
        EXPECT_NEAR(mann_whitney_exact_upper_tail(n, m, u), expected, 1e-12 * expected + 1e-300)
            << n << " " << m << " " << u;
      }
    }
  }
}

TEST(MannWhitneyExact, AFewSamplesAgainstHundredsOfThousandsStayFast) {
  // max_samples may be up to 10 million; 6 kept samples on one side and 200000 on
  // the other took minutes (the exact distribution counted in O(m^2 n^2)).
  std::vector<double> few, many;
  for (int i = 0; i < 6; ++i) few.push_back(5003 + 0.37 * i);
  for (int i = 0; i < 200000; ++i) many.push_back(5000 + 0.001 * i + 0.0001);
  const auto start = std::chrono::steady_clock::now();
  const MannWhitneyResult result = mann_whitney_u(few, many);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(result.exact);
  EXPECT_LT(seconds, 5.0);
  EXPECT_GT(result.p_value, 0.0);
  EXPECT_LE(result.p_value, 1.0);
  // All six sit just above the 3000th of 200000: far down in the other's distribution.
  EXPECT_LT(result.p_value, 1e-6);
  // Symmetric in the order of the two sides.
  EXPECT_NEAR(mann_whitney_u(many, few).p_value, result.p_value, 1e-12 * result.p_value);
}

TEST_F(Compare, ADifferentTimingProtocolOrRegimeIsSaidLoudly) {
  const std::string candidate = copy("protocol.db");
  plant(candidate, "UPDATE runs SET timing_protocol = 'cuda_event_v3', measure_regime = 'burst'");
  const Comparison comparison = compare(candidate);
  ASSERT_EQ(comparison.warnings.size(), 2u);
  EXPECT_EQ(comparison.warnings[0], "timing_protocol differs ('cuda_event_v2' vs 'cuda_event_v3'): the times are not "
                                    "like with like");
  EXPECT_EQ(comparison.warnings[1], "measure_regime differs ('sustained' vs 'burst'): the times are not like with like");
  const std::string text = render(comparison, Format::text);
  EXPECT_LT(text.find("WARNING: timing_protocol differs"), text.find("Environment:")) << text;
  const std::string markdown = render(comparison, Format::markdown);
  EXPECT_NE(markdown.find("> [!WARNING]\n> timing_protocol differs"), std::string::npos) << markdown;
}

TEST_F(Compare, TwoRunsOfOneFile) {
  write_run(baseline_, 99);  // run 2, other noise
  const storage::RunReader reader(baseline_);
  const Comparison comparison = compare_runs(reader, 1, reader, 2, {});
  EXPECT_FALSE(comparison.has_regression());
  EXPECT_EQ(comparison.cases.size(), synthetic_cases().size());
  EXPECT_EQ(resolve_run(reader, {baseline_, std::nullopt}, "BASELINE"), 2);
  EXPECT_EQ(resolve_run(reader, {baseline_, 1}, "BASELINE"), 1);
  try {
    resolve_run(reader, {baseline_, 7}, "CANDIDATE");
    ADD_FAILURE() << "run 7 was found";
  } catch (const BadInputError& error) {
    EXPECT_EQ(std::string(error.what()),
              "CANDIDATE: " + baseline_ + " has no run 7; its runs: 1, 2 (leave out :RUN for the latest)");
  }
}

TEST_F(Compare, NothingIsWritten) {
  const std::string candidate = copy("candidate.db");
  scale_times(candidate, index_of("sdpa_flash", 2048), 1.3);
  { SQLite::Database(candidate, SQLite::OPEN_READWRITE).exec("PRAGMA wal_checkpoint(TRUNCATE)"); }
  const std::string base_bytes = file_bytes(baseline_), cand_bytes = file_bytes(candidate);
  const Comparison comparison = compare(candidate);
  for (Format format : {Format::text, Format::markdown, Format::json}) render(comparison, format);
  EXPECT_EQ(file_bytes(baseline_), base_bytes);
  EXPECT_EQ(file_bytes(candidate), cand_bytes);
}

TEST_F(Compare, ParsesRunArguments) {
  EXPECT_EQ(parse_run_argument("a.db", "BASELINE").path, "a.db");
  EXPECT_FALSE(parse_run_argument("a.db", "BASELINE").run_id);
  EXPECT_EQ(*parse_run_argument("a.db:3", "BASELINE").run_id, 3);
  EXPECT_EQ(parse_run_argument("dir:x/a.db:12", "BASELINE").path, "dir:x/a.db");
  EXPECT_FALSE(parse_run_argument("a.db:latest", "BASELINE").run_id);
  EXPECT_EQ(parse_run_argument(baseline_, "BASELINE").path, baseline_);
  const std::string colon_file = scratch_.write("odd:name.db", "");
  EXPECT_EQ(parse_run_argument(colon_file, "BASELINE").path, colon_file);  // an existing file is taken as it is
  for (const std::string bad : {"a.db:", "a.db:x", "a.db:0", "a.db:-1", ":3", ""}) {
    try {
      parse_run_argument(bad, "CANDIDATE");
      ADD_FAILURE() << bad << " was accepted";
    } catch (const BadInputError& error) {
      const std::string message = error.what();
      EXPECT_EQ(message.rfind("CANDIDATE: ", 0), 0u) << message;
      EXPECT_NE(message.find("DATABASE:RUN"), std::string::npos) << message;
    }
  }
}

TEST_F(Compare, TheJsonIsOneStableObject) {
  const std::string candidate = copy("candidate.db");
  scale_times(candidate, index_of("sdpa_flash", 2048), 1.3);
  const nlohmann::ordered_json json = nlohmann::ordered_json::parse(render(compare(candidate), Format::json));
  std::vector<std::string> keys;
  for (const auto& item : json.items()) keys.push_back(item.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"format", "headline", "has_regression", "summary", "baseline", "candidate",
                                            "settings", "warnings", "environment", "cases", "only_in_baseline",
                                            "only_in_candidate", "fastest_changes", "claims"}));
  EXPECT_EQ(json["format"], "attnsweep-compare/1");
  // The synthetic runs store no claims, and the slower flash case leaves each group's fastest as it was.
  EXPECT_TRUE(json["claims"].empty());
  EXPECT_TRUE(json["fastest_changes"].empty());
  EXPECT_EQ(json["has_regression"], true);
  EXPECT_EQ(json["summary"]["regressions"], 1);
  EXPECT_EQ(json["summary"]["time_verdicts"]["SLOWER"], 1);
  EXPECT_EQ(json["summary"]["time_verdicts"]["SAME"], 9);
  EXPECT_EQ(json["cases"].size(), synthetic_cases().size());
  const auto& slow = json["cases"][index_of("sdpa_flash", 2048)];
  EXPECT_EQ(slow["key"]["label"], label_of(index_of("sdpa_flash", 2048)));
  EXPECT_EQ(slow["time"]["verdict"], "SLOWER");
  EXPECT_EQ(slow["findings"][0]["severity"], "regression");
  EXPECT_NEAR(slow["time"]["ratio"].get<double>(), 1.3, 1e-9);
  // What decided the verdict is in the document too: the floor, the quantile and its ratio.
  EXPECT_EQ(json["settings"]["min_change_us"], 2.0);
  EXPECT_EQ(json["settings"]["shift_quantile"], 0.1);
  EXPECT_NEAR(slow["time"]["quantile_ratio"].get<double>(), 1.3, 1e-9);
  EXPECT_TRUE(json["cases"][0]["time"]["quantile_ratio"].is_null());
}

TEST_F(Compare, AQuantileThatMovedTheOtherWayIsNotCalledOnlyAMove) {
  // 70% of the samples 30% slower, the fastest 30% 10% faster: the median moved +30%,
  // the p10 -10%, beyond the threshold the other way. AMBIGUOUS, said as it is.
  const std::string candidate = copy("mixed.db");
  const int index = index_of("sdpa_efficient", 1024);
  plant(candidate, "UPDATE samples SET gpu_time_us = gpu_time_us * CASE WHEN sample_index % 10 < 3 THEN 0.9 ELSE 1.3 "
                   "END WHERE case_id = " + case_id(index));
  const Comparison comparison_1 = compare(candidate);

  const CaseComparison& mixed = case_named(comparison_1, index);
  EXPECT_EQ(mixed.time.verdict, TimeVerdict::ambiguous);
  EXPECT_NE(mixed.time.reason.find("the median moved +29.6%"), std::string::npos) << mixed.time.reason;
  EXPECT_NE(mixed.time.reason.find("but p10 the other way, -9.7%"), std::string::npos) << mixed.time.reason;
}

TEST_F(Compare, TheMarkdownFitsAPullRequestComment) {
  const std::string candidate = copy("candidate.db");
  scale_times(candidate, index_of("sdpa_flash", 2048), 1.3);
  plant(candidate, "UPDATE runs SET git_sha = 'f00dfeedbeef'");
  const std::string markdown = render(compare(candidate), Format::markdown);
  EXPECT_EQ(markdown.rfind("### attnsweep compare: 1 regression, 0 improvements, 9 same\n", 0), 0u) << markdown;
  EXPECT_NE(markdown.find("| fact | baseline | candidate |"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("| git_sha | "), std::string::npos) << markdown;
  EXPECT_LT(markdown.find("**Environment**"), markdown.find("**Findings**"));
  EXPECT_NE(markdown.find("| sdpa_flash 8x16x2048x64 bf16 causal cuda | time | time |"), std::string::npos) << markdown;
  EXPECT_EQ(markdown.find("sdpa_flash 8x16x1024x64"), std::string::npos) << "a SAME case is in the findings";
  EXPECT_NE(markdown.find("<details><summary>Counts per verdict</summary>"), std::string::npos);
  EXPECT_NE(markdown.find("| time SAME | 9 |"), std::string::npos) << markdown;
}

}  // namespace
}  // namespace attnsweep::compare
