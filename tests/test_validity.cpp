// The validity label (runner/measure/validity.hpp): one healthy CUDA case from
// the H200's numbers, then each way it turns suspect, with the stored reason.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <limits>

#include "runner/measure/validity.hpp"

namespace attnsweep {
namespace {

// What the judge reads of a case's timed samples: how many, their median, mean and stdev (us).
SampleStatistics timed(int count, double median, double mean, double stdev) {
  SampleStatistics stats;
  stats.count = count;
  stats.median = median;
  stats.mean = mean;
  stats.stdev = stdev;
  return stats;
}

// `kernels` kernels in each of the 3 profiled passes and in a replay of the CUDA graph:
// work that launches alike eagerly and replayed.
void launch_kernels(CaseResult& r, int kernels) {
  r.profile->kernels_each_forward = {kernels, kernels, kernels};
  r.graph_launches_per_replay = kernels;
}

// sdpa_cudnn 8x16x1024x64 bf16 forward on the H200 (the device proofs of proofs/): event median
// 60.4 us, profiler kernel time 57.3 us, one kernel, graph replay the same.
CaseResult healthy_cuda_case() {
  CaseResult r;
  r.status = CaseStatus::ok;
  r.gpu_time_us = timed(200, 60.4, 60.5, 0.6);  // 1% relative
  r.stop_reason = StopReason::target_rel_stdev;
  r.launch_latency_hidden = true;
  ProfileSummary profile;
  profile.profiled_forwards = 3;
  profile.kernel_time_us_per_forward = 57.3;
  r.profile = profile;
  launch_kernels(r, 1);
  r.graph_output_rel_diff = 0.0;
  r.power_cap_share = 0.0;
  r.thermal_cap_share = 0.0;
  r.other_processes = 0;
  return r;
}

Case bf16_case() {
  Case c;
  c.variant = "sdpa_cudnn";
  c.dtype = Dtype::bf16;
  return c;
}

ValidityLimits limits() { return {/*min_samples=*/10, /*target_rel_stdev=*/0.02, /*fixed_sample_count=*/false}; }

std::string judged(CaseResult r) {
  judge_validity(bf16_case(), limits(), r);
  return r.validity + (r.validity_reasons.empty() ? "" : " " + format_reasons(r.validity_reasons));
}

TEST(Validity, AHealthyCaseIsOk) {
  CaseResult r = healthy_cuda_case();
  judge_validity(bf16_case(), limits(), r);
  EXPECT_EQ(r.validity, "ok");
  EXPECT_TRUE(r.validity_reasons.empty());
}

TEST(Validity, AFailedOrUntimedCaseHasNoLabel) {
  CaseResult failed = healthy_cuda_case();
  failed.status = CaseStatus::unsupported;
  judge_validity(bf16_case(), limits(), failed);
  EXPECT_EQ(failed.validity, "");
  CaseResult untimed = healthy_cuda_case();
  untimed.gpu_time_us.reset();
  judge_validity(bf16_case(), limits(), untimed);
  EXPECT_EQ(untimed.validity, "");
}

TEST(Validity, EventsThatMissHalfTheKernelTimeAreSuspect) {
  // Work on a side stream the events do not wait for: kernels 2x the events.
  CaseResult r = healthy_cuda_case();
  r.profile->kernel_time_us_per_forward = 121.0;
  EXPECT_EQ(judged(r),
            "suspect event_vs_kernels: the profiler's kernel time is 121.0 us per pass, the event median 60.4 us "
            "(ratio 2.00, kernels longer by more than the allowed 15.1 us)");
}

TEST(Validity, EachWayHasItsAllowanceFromTheH200sHealthyCases) {
  // cuDNN decoding on the H200: 2 kernels of 9.2 us in events of 17.5 us (its
  // graph replay 16.1 us): gaps on the GPU, within 10 + 2 us.
  CaseResult decoding = healthy_cuda_case();
  decoding.gpu_time_us->median = 17.5;
  launch_kernels(decoding, 2);
  decoding.profile->kernel_time_us_per_forward = 9.2;
  EXPECT_EQ(judged(decoding), "ok");
  // Events 20 us past 3 kernels in 40 us: more than max(10, 10 + 3).
  CaseResult gaps = healthy_cuda_case();
  gaps.gpu_time_us->median = 40.0;
  launch_kernels(gaps, 3);
  gaps.profile->kernel_time_us_per_forward = 20.0;
  EXPECT_EQ(judged(gaps), "suspect event_vs_kernels: the profiler's kernel time is 20.0 us per pass, the event "
                          "median 40.0 us (ratio 0.50, events longer by more than the allowed 13.0 us)");
  // The same gaps, and the CUDA graph's replays nearly as long as the events: the GPU's own
  // gaps between kernels (cuDNN decoding on the H200: 5 kernels of 41.5 us, events 57.6 us,
  // replays 54.9 us). Replays as short as the kernels leave it suspect.
  CaseResult confirmed = gaps;
  confirmed.graph_time_us = SampleStatistics{};
  confirmed.graph_time_us->median = 36.0;  // 90% of 40
  EXPECT_EQ(judged(confirmed), "ok");
  confirmed.graph_time_us->median = 35.9;
  EXPECT_EQ(judged(confirmed), judged(gaps));
  CaseResult decoding_cudnn = healthy_cuda_case();
  decoding_cudnn.gpu_time_us->median = 57.6;
  launch_kernels(decoding_cudnn, 5);
  decoding_cudnn.profile->kernel_time_us_per_forward = 41.5;
  decoding_cudnn.graph_time_us = SampleStatistics{};
  decoding_cudnn.graph_time_us->median = 54.9;
  EXPECT_EQ(judged(decoding_cudnn), "ok");
  // Kernels longer than the events are never excused by the graph: the events missed work.
  CaseResult side_stream = healthy_cuda_case();
  side_stream.gpu_time_us->median = 12.0;
  side_stream.profile->kernel_time_us_per_forward = 18.0;
  side_stream.graph_time_us = SampleStatistics{};
  side_stream.graph_time_us->median = 12.0;
  EXPECT_NE(judged(side_stream).find("suspect event_vs_kernels"), std::string::npos) << judged(side_stream);
  // Kernels 6 us longer than 12 us of events: more than max(3, 5).
  CaseResult missed = healthy_cuda_case();
  missed.gpu_time_us->median = 12.0;
  missed.profile->kernel_time_us_per_forward = 18.0;
  EXPECT_EQ(judged(missed).substr(0, 25), "suspect event_vs_kernels:");
  // The H200's power-capped extreme (kernels 1.12x the events) stays ok.
  CaseResult capped = healthy_cuda_case();
  capped.gpu_time_us->median = 952.0;
  capped.profile->kernel_time_us_per_forward = 1065.7;
  EXPECT_EQ(judged(capped), "ok");
}

TEST(Validity, TheEventCheckNeedsLaunchLatencyHeldOutAndConsistentCounts) {
  CaseResult r = healthy_cuda_case();
  r.profile->kernel_time_us_per_forward = 121.0;
  r.launch_latency_hidden = false;  // the events hold host gaps: no statement
  EXPECT_EQ(judged(r), "ok");
  r.launch_latency_hidden = true;
  r.profile->counts_consistent = false;
  EXPECT_EQ(judged(r), "suspect counts_inconsistent: the profiled passes did not all show the same kernels");
}

TEST(Validity, AGraphReplayWithOtherKernelsOrAnotherOutputIsSuspect) {
  CaseResult dropped = healthy_cuda_case();
  dropped.graph_launches_per_replay = 0;
  EXPECT_EQ(judged(dropped),
            "suspect graph_kernel_count: a profiled CUDA-graph replay launched 0 kernel(s) and copies, an eager pass 1");
  CaseResult stale = healthy_cuda_case();
  stale.graph_output_rel_diff = std::numeric_limits<double>::quiet_NaN();  // left as the NaN it was filled with
  EXPECT_EQ(judged(stale),
            "suspect graph_output: the CUDA-graph replays' output is not finite (the eager output is)");
  CaseResult different = healthy_cuda_case();
  different.graph_output_rel_diff = 0.5;
  EXPECT_EQ(judged(different), "suspect graph_output: the CUDA-graph replays' output differs from the eager output "
                               "by 5.00e-01 (relative; bound 1.60e-02)");
  // A copy that the graph runs as a kernel (naive's clone on the H200): 5 kernels
  // and 1 memcpy eagerly, 6 kernels replayed, the same work.
  CaseResult copy_as_kernel = healthy_cuda_case();
  copy_as_kernel.profile->kernels_each_forward = {5, 5, 5};
  copy_as_kernel.profile->memcpy_each_forward = {1, 1, 1};
  copy_as_kernel.graph_launches_per_replay = 6;
  copy_as_kernel.gpu_time_us->median = 560.0;
  copy_as_kernel.profile->kernel_time_us_per_forward = 550.0;
  EXPECT_EQ(judged(copy_as_kernel), "ok");
  CaseResult nondeterministic = healthy_cuda_case();
  nondeterministic.graph_output_rel_diff = 1e-3;  // atomics in a backward: within the dtype's bound
  EXPECT_EQ(judged(nondeterministic), "ok");
}

TEST(Validity, SamplesTakenInTheWrongStateAreSuspectWithEveryReason) {
  CaseResult r = healthy_cuda_case();
  r.throttled_samples = 4;
  r.power_cap_share = 1.0;
  r.thermal_cap_share = 0.6;
  r.other_processes = 2;
  r.cooldown_budget_exhausted = true;
  judge_validity(bf16_case(), limits(), r);
  EXPECT_EQ(r.validity, "suspect");
  ASSERT_EQ(r.validity_reasons.size(), 5u);
  EXPECT_EQ(format_reason(r.validity_reasons[0]), "shared_gpu: 2 other compute process(es) on the GPU during the case");
  EXPECT_EQ(format_reason(r.validity_reasons[1]),
            "throttled_samples: 4 sample(s) dropped, the SM clock under the throttle fraction");
  EXPECT_EQ(format_reason(r.validity_reasons[2]), "power_capped: 100% of the kept samples under a power cap");
  EXPECT_EQ(format_reason(r.validity_reasons[3]), "thermal_capped: 60% of the kept samples under a thermal slowdown");
  EXPECT_EQ(format_reason(r.validity_reasons[4]).substr(0, 19), "cooldown_exhausted:");
  CaseResult half = healthy_cuda_case();
  half.power_cap_share = 0.5;  // "most" means more than half
  EXPECT_EQ(judged(half), "ok");
}

TEST(Validity, TooFewSamplesOrAStoppingRuleThatNeverConvergedIsSuspect) {
  CaseResult few = healthy_cuda_case();
  few.gpu_time_us->count = 4;
  few.stop_reason = StopReason::max_case_seconds;
  few.gpu_time_us->stdev = 0.01;
  EXPECT_EQ(judged(few), "suspect few_samples: 4 kept sample(s), under min_samples 10");

  CaseResult moving = healthy_cuda_case();
  moving.stop_reason = StopReason::max_samples;
  moving.gpu_time_us->stdev = 3.025;  // 5% relative
  EXPECT_EQ(judged(moving), "suspect not_converged: stopped at max_samples with a relative stdev of 5.0% "
                            "(target 2.0%), still moving");
  // At the cap, but within the target: converged all the same.
  moving.gpu_time_us->stdev = 0.6;
  EXPECT_EQ(judged(moving), "ok");
  // A fixed count asked for (min_samples == max_samples) has no rule to converge.
  moving.gpu_time_us->stdev = 3.025;
  judge_validity(bf16_case(), {10, 0.02, /*fixed_sample_count=*/true}, moving);
  EXPECT_EQ(moving.validity, "ok");
}

// Eager samples on the given levels (runs of `count` samples at `us`), with a
// fixed +-1 us pattern of scatter, as the timer stores them.
std::vector<TimingSample> samples_on_levels(const std::vector<std::pair<int, double>>& runs) {
  std::vector<TimingSample> samples;
  for (const auto& [count, us] : runs) {
    for (int i = 0; i < count; ++i) {
      TimingSample sample;
      sample.gpu_time_us = us + static_cast<double>((static_cast<int>(samples.size()) * 7) % 5 - 2) * 0.5;
      samples.push_back(sample);
    }
  }
  return samples;
}

TEST(Validity, SamplesThatMoveBetweenLevelsAreSuspect) {
  // FA3's variable-length prefill on the H200 (proofs/serving/h200-serving.md):
  // 190 samples on levels of about 482, 505 and 523 us.
  CaseResult r = healthy_cuda_case();
  r.samples = samples_on_levels({{54, 482.0}, {70, 505.0}, {46, 523.0}, {20, 482.0}});
  EXPECT_EQ(judged(r), "suspect level_shift: the medians of 8 consecutive blocks of 23 samples ranged from 482.0 "
                       "to 523.0 us (8.1% of the median, allowed 15.1 us): the time moved between levels, so the "
                       "median depends on when the case stopped");
  const auto levels = sample_levels(r.samples);
  ASSERT_TRUE(levels.has_value());
  EXPECT_DOUBLE_EQ(levels->median_us, 504.5);  // of the 184 samples in whole blocks
  EXPECT_TRUE(levels->shifted());

  // A step of 2% is under the 3% allowance.
  r.samples = samples_on_levels({{100, 480.0}, {100, 490.0}});
  EXPECT_EQ(judged(r), "ok");
  // One step of 10% from a short kernel (flash decoding: 157 -> 142 us).
  r.samples = samples_on_levels({{190, 157.0}, {200, 142.0}});
  EXPECT_EQ(judged(r).substr(0, 100), "suspect level_shift: the medians of 8 consecutive blocks of 48 samples "
                                     "ranged from 142.0 to 157.0 us");
}

TEST(Validity, ScatterWithoutLevelsAndTooFewSamplesAreNotALevelShift) {
  CaseResult r = healthy_cuda_case();
  // Samples scattered over +-5% in no order: every block's median is near the middle.
  std::vector<TimingSample> scattered;
  for (int i = 0; i < 400; ++i) {
    TimingSample sample;
    sample.gpu_time_us = 1000.0 + static_cast<double>((i * 37) % 101 - 50);
    scattered.push_back(sample);
  }
  r.samples = scattered;
  EXPECT_EQ(judged(r), "ok");
  // 39 samples make 3 blocks of 10: not judged, whatever they do.
  r.samples = samples_on_levels({{20, 400.0}, {19, 500.0}});
  EXPECT_FALSE(sample_levels(r.samples).has_value());
  EXPECT_EQ(judged(r), "ok");
  // Only kept eager samples count: throttled ones and graph replays are left out.
  r.samples = samples_on_levels({{100, 480.0}, {100, 600.0}});
  for (std::size_t i = 100; i < r.samples.size(); ++i) {
    if (i % 2) r.samples[i].throttled = true;
    else r.samples[i].mode = SampleMode::graph;
  }
  EXPECT_EQ(judged(r), "ok");
  // Samples the timer did not keep (the blocking kernel timed out) are left out too.
  r.samples = samples_on_levels({{100, 480.0}, {100, 600.0}});
  for (std::size_t i = 100; i < r.samples.size(); ++i) r.samples[i].block_timed_out = true;
  EXPECT_EQ(judged(r), "ok");  // the 100 kept samples: 8 blocks of 12 on one level
}

TEST(Validity, TheLevelCheckStartsAtFortySamplesAndHasAOneMicrosecondFloor) {
  CaseResult r = healthy_cuda_case();
  r.samples = samples_on_levels({{20, 400.0}, {20, 500.0}});  // 40 samples: 4 blocks of 10
  const auto forty = sample_levels(r.samples);
  ASSERT_TRUE(forty.has_value());
  EXPECT_EQ(forty->blocks, 4);
  EXPECT_EQ(forty->block_size, 10);
  EXPECT_TRUE(forty->shifted());
  // Without scatter the noise term is 0: on a 20 us kernel 3% is 0.6 us, the floor 1 us decides.
  std::vector<TimingSample> steady;
  for (int i = 0; i < 80; ++i) {
    TimingSample sample;
    sample.gpu_time_us = i < 40 ? 20.0 : 20.9;
    steady.push_back(sample);
  }
  r.samples = steady;
  EXPECT_EQ(judged(r), "ok");
  for (int i = 40; i < 80; ++i) steady[i].gpu_time_us = 21.5;
  r.samples = steady;
  EXPECT_EQ(judged(r).substr(0, 20), "suspect level_shift:");
  // A non-finite sample is left out, not sorted.
  steady[3].gpu_time_us = std::numeric_limits<double>::quiet_NaN();
  const auto levels = sample_levels(steady);
  ASSERT_TRUE(levels.has_value());
  EXPECT_EQ(levels->block_size, 10);
  EXPECT_EQ(levels->blocks, 7);  // 79 kept samples
}

// tests/data/h200_sample_levels.csv: real samples of four H200 cases, by name.
std::map<std::string, std::vector<TimingSample>> h200_samples() {
  std::ifstream in(std::string(ATTNSWEEP_SOURCE_DIR) + "/tests/data/h200_sample_levels.csv");
  std::map<std::string, std::vector<TimingSample>> cases;
  std::string line;
  while (std::getline(in, line)) {
    const auto comma = line.find(',');
    if (line.empty() || line[0] == '#' || line.rfind("case,", 0) == 0 || comma == std::string::npos) continue;
    TimingSample sample;
    sample.gpu_time_us = std::stod(line.substr(comma + 1));
    cases[line.substr(0, comma)].push_back(sample);
  }
  return cases;
}

TEST(Validity, TheH200sLevelShiftsAreFoundAndItsSteadyCasesAreNot) {
  const auto cases = h200_samples();
  ASSERT_EQ(cases.size(), 4u);
  const auto levels = [&](const std::string& name) {
    const auto found = sample_levels(cases.at(name));
    EXPECT_TRUE(found.has_value()) << name;
    return found.value_or(SampleLevels{});
  };
  const SampleLevels fa3 = levels("fa3_varlen_prefill");
  EXPECT_EQ(fa3.blocks, 8);
  EXPECT_EQ(fa3.block_size, 23);
  EXPECT_NEAR(fa3.lowest_us, 488.5, 0.1);
  EXPECT_NEAR(fa3.highest_us, 515.9, 0.1);
  EXPECT_TRUE(fa3.shifted());
  const SampleLevels step = levels("flash_decode_16k");
  EXPECT_NEAR(step.lowest_us, 141.4, 0.1);
  EXPECT_NEAR(step.highest_us, 156.8, 0.1);
  EXPECT_TRUE(step.shifted());
  // sdpa_flash on the same prompts: scattered over +-4%, with a step of 2.3% halfway (976-984
  // to 999-1005 us), under the 3%; and a steady cuDNN case.
  const SampleLevels flash = levels("flash_varlen_prefill");
  EXPECT_LT(flash.highest_us - flash.lowest_us, flash.allowed_us);
  EXPECT_FALSE(flash.shifted());
  EXPECT_FALSE(levels("cudnn_bench").shifted());
}

TEST(Validity, ACpuCaseIsJudgedOnItsSamplesAlone) {
  CaseResult r;
  r.status = CaseStatus::ok;
  r.cpu_time_us = timed(12, 900, 905, 9);
  r.stop_reason = StopReason::target_rel_stdev;
  ProfileSummary profile;
  profile.kernels_each_forward = {0, 0, 0};
  r.profile = profile;
  EXPECT_EQ(judged(r), "ok");
}

TEST(Validity, ReasonsAreStoredAsCodeAndDetailJoinedAndReadBack) {
  const std::vector<ValidityReason> reasons = {{ValidityCode::few_samples, "4 kept sample(s), under min_samples 10"},
                                               {ValidityCode::shared_gpu, "1 other"}};
  const std::string stored = format_reasons(reasons);
  EXPECT_EQ(stored, "few_samples: 4 kept sample(s), under min_samples 10; shared_gpu: 1 other");
  EXPECT_EQ(parse_reasons(stored), reasons);
  EXPECT_EQ(format_reasons({}), "");
  EXPECT_EQ(parse_reasons("").value().size(), 0u);
  // level_shift's detail holds a ": " of its own; only the first one ends the code.
  EXPECT_EQ(parse_reasons("level_shift: the medians ... us): the time moved").value().front().detail,
            "the medians ... us): the time moved");
  // A code no build wrote, or a part without one, is a damaged value.
  EXPECT_FALSE(parse_reasons("power_caped: 100% of the kept samples").has_value());
  EXPECT_FALSE(parse_reasons("few_samples: 4; shared_gpu").has_value());
  for (const std::string& name : validity_code_names()) EXPECT_EQ(to_string(*parse_validity_code(name)), name);
}

TEST(Validity, StopReasonsHaveOneSpellingEach) {
  for (const std::string& name : stop_reason_names()) EXPECT_EQ(to_string(*parse_stop_reason(name)), name);
  EXPECT_EQ(stop_reason_names(),
            (std::vector<std::string>{"target_rel_stdev", "noise_converged", "max_case_seconds", "max_samples",
                                      "median_ci"}));
  EXPECT_FALSE(parse_stop_reason("max_sample").has_value());
  EXPECT_FALSE(parse_stop_reason("").has_value());
}

}  // namespace
}  // namespace attnsweep
