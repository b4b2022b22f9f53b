// One case end to end on the CPU: timing, stopping rule, numerics, profile.
#include <gtest/gtest.h>

#include "runner/measure/case_runner.hpp"
#include "runner/device/device.hpp"
#include "runner/measure/flops.hpp"
#include "runner/measure/reference_chunks.hpp"

#include <ATen/ATen.h>

namespace attnsweep {
namespace {

MeasureSettings small_settings() {
  MeasureSettings settings;
  settings.warmup = 2;
  settings.min_samples = 6;
  settings.max_samples = 30;
  settings.target_rel_stdev = 0.5;
  settings.max_case_seconds = 5;
  settings.profiled_forwards = 2;
  return settings;
}

TEST(Device, IndexOfAResolvedDevice) {
  EXPECT_EQ(Device::parse("cuda:0").cuda_index(), 0);
  EXPECT_EQ(Device::parse("cuda:3").cuda_index(), 3);
  EXPECT_EQ(Device::parse("cuda").cuda_index(), 0);
  EXPECT_EQ(Device::parse("cpu").cuda_index(), -1);
}

TEST(CaseRunnerCpu, MeasuresAnOkCase) {
  CaseRunner runner(Device::cpu(), small_settings(), 0);
  const Case c{0, "naive", Shape{1, 2, 2, 64, 64, 32}, Dtype::fp32, true};
  const CaseResult r = runner.run(c);
  ASSERT_EQ(r.status, CaseStatus::ok) << r.error_message;
  EXPECT_EQ(r.device, Device::cpu());
  EXPECT_EQ(r.timer, "steady_clock");
  EXPECT_FALSE(r.gpu_time_us.has_value());
  ASSERT_TRUE(r.cpu_time_us.has_value());
  EXPECT_GE(r.cpu_time_us->count, 6);
  EXPECT_LE(r.cpu_time_us->count, 30);
  EXPECT_EQ(static_cast<std::size_t>(r.cpu_time_us->count), r.samples.size());
  EXPECT_GT(r.cpu_time_us->median, 0);
  EXPECT_LE(r.cpu_time_us->p10, r.cpu_time_us->median);
  EXPECT_LE(r.cpu_time_us->median, r.cpu_time_us->p90);
  EXPECT_FALSE(r.stop_reason.empty());
  EXPECT_DOUBLE_EQ(r.flops, forward_flops(c.shape, true));
  ASSERT_TRUE(r.tflops.has_value());
  EXPECT_NEAR(*r.tflops, r.flops / (r.cpu_time_us->median * 1e-6) / 1e12, 1e-12);
  ASSERT_TRUE(r.rel_error.has_value());
  EXPECT_LT(*r.rel_error, 1e-5);
  ASSERT_TRUE(r.profile.has_value());
  EXPECT_TRUE(r.profile->counts_consistent);
  EXPECT_EQ(r.profile->attempts, 1);
  EXPECT_FALSE(r.peak_mem_bytes.has_value());  // CUDA allocator only
  EXPECT_TRUE(r.warnings.empty());
}

TEST(CaseRunnerCpu, AReusedReferenceGivesTheSameErrorAsAFreshOne) {
  // One runner goes through other shapes and dtypes first, so a reference kept
  // for the wrong inputs would show as a different (much larger) error.
  CaseRunner warm(Device::cpu(), small_settings(), 0);
  const Shape shape{2, 2, 2, 32, 32, 16}, other{2, 2, 2, 48, 48, 16};
  for (const Case& c : {Case{0, "naive", shape, Dtype::fp32, true}, Case{1, "naive", other, Dtype::fp32, true},
                        Case{2, "naive", shape, Dtype::bf16, true}, Case{3, "naive", shape, Dtype::fp32, true}}) {
    ASSERT_EQ(warm.run(c).status, CaseStatus::ok);
  }
  const Case math{4, "sdpa_math", shape, Dtype::fp32, true};
  const CaseResult reused = warm.run(math);
  const CaseResult fresh = CaseRunner(Device::cpu(), small_settings(), 0).run(math);
  ASSERT_TRUE(reused.rel_error.has_value());
  ASSERT_TRUE(fresh.rel_error.has_value());
  EXPECT_EQ(*reused.rel_error, *fresh.rel_error);
  EXPECT_LT(*reused.rel_error, 1e-5);
}

TEST(CaseRunnerCpu, NoGpuOnlyBackendsOnTheCpu) {
  CaseRunner runner(Device::cpu(), small_settings(), 0);
  for (const std::string variant : {"sdpa_efficient", "sdpa_cudnn"}) {
    const CaseResult r = runner.run(Case{0, variant, Shape{1, 2, 2, 16, 16, 8}, Dtype::fp32, true});
    EXPECT_EQ(r.status, CaseStatus::unsupported) << variant;
    EXPECT_NE(r.error_message.find("no CPU implementation"), std::string::npos) << r.error_message;
    EXPECT_TRUE(r.samples.empty());
    EXPECT_FALSE(r.profile.has_value());
  }
}

TEST(CaseRunnerCpu, AccuracyCheckCanBeTurnedOff) {
  MeasureSettings settings = small_settings();
  settings.accuracy_check = false;
  CaseRunner runner(Device::cpu(), settings, 0);
  const CaseResult r = runner.run(Case{0, "sdpa_math", Shape{1, 2, 2, 16, 16, 8}, Dtype::bf16, false});
  ASSERT_EQ(r.status, CaseStatus::ok);
  EXPECT_FALSE(r.rel_error.has_value());
  EXPECT_EQ(r.sdpa_backend, "math");
}

}  // namespace
}  // namespace attnsweep

namespace attnsweep {
namespace {

// The float64 references go one chunk at a time: each chunk's float64 scores at
// most 1 GiB, every (batch, key/value head) in exactly one chunk, and a small
// shape in one chunk per batch entry, as before chunks existed.
TEST(ReferenceChunks, BoundTheFloat64ScoresAndCoverEveryHeadOnce) {
  const auto inputs_of = [](std::int64_t b, std::int64_t h, std::int64_t kv, std::int64_t s, std::int64_t d) {
    AttentionInputs inputs;
    inputs.query = at::empty({b, h, s, d}, at::kBFloat16);
    inputs.key = at::empty({b, kv, s, d}, at::kBFloat16);
    inputs.value = at::empty({b, kv, s, d}, at::kBFloat16);
    return inputs;
  };
  struct Expected {
    std::int64_t b, h, kv, s, chunks, kv_heads_per_chunk;
  };
  for (const Expected& e : {Expected{8, 16, 16, 1024, 8, 16}, Expected{1, 32, 32, 8192, 16, 2},
                            Expected{2, 32, 8, 4096, 8, 2}, Expected{2, 16, 16, 4096, 4, 8}}) {
    SCOPED_TRACE(std::to_string(e.b) + "x" + std::to_string(e.h) + "/" + std::to_string(e.kv) + "x" + std::to_string(e.s));
    const AttentionInputs inputs = inputs_of(e.b, e.h, e.kv, e.s, 128);
    const auto chunks = reference_chunks(inputs);
    ASSERT_EQ(static_cast<std::int64_t>(chunks.size()), e.chunks);
    std::vector<int> covered(static_cast<std::size_t>(e.b * e.kv), 0);
    for (const ReferenceChunk& chunk : chunks) {
      EXPECT_EQ(chunk.kv_heads, e.kv_heads_per_chunk);
      EXPECT_EQ(chunk.group, e.h / e.kv);
      EXPECT_LE(chunk.kv_heads * chunk.group * e.s * e.s * 8, std::int64_t{1} << 30);
      const AttentionInputs piece = chunk.of(inputs);
      EXPECT_EQ(piece.query.size(1), chunk.kv_heads * chunk.group);
      EXPECT_EQ(piece.key.size(1), chunk.kv_heads);
      EXPECT_EQ(piece.grouped, e.h != e.kv);
      for (std::int64_t h = chunk.first_kv_head; h < chunk.first_kv_head + chunk.kv_heads; ++h) {
        covered[static_cast<std::size_t>(chunk.batch * e.kv + h)] += 1;
      }
    }
    for (const int times : covered) EXPECT_EQ(times, 1);
  }
}

}  // namespace
}  // namespace attnsweep
