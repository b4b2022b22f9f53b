// One case end to end on the CPU: timing, stopping rule, numerics, profile.
#include <gtest/gtest.h>

#include "runner/measure/case_runner.hpp"
#include "runner/device/device.hpp"
#include "runner/measure/flops.hpp"
#include "runner/measure/reference_chunks.hpp"
#include "runner/measure/accuracy.hpp"
#include "runner/measure/gradient_check.hpp"
#include "runner/measure/inputs.hpp"
#include "runner/variants/naive_attention.hpp"
#include "tests/support/few_samples.hpp"

#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/grad_mode.h>

#include <ATen/ATen.h>

namespace attnsweep {
namespace {

// Warm-up 2, 6 to 30 samples, at most 5 s, 2 profiled forwards; stops at 50% stdev/mean.
MeasureSettings small_settings() {
  MeasureSettings settings = attnsweep::testing::few_samples(2, 6, 30, 5, 2);
  settings.target_rel_stdev = 0.5;
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
  EXPECT_TRUE(r.stop_reason.has_value());
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

// Issue 36: values of another head dim than the queries' (24/8, MLA-like) in
// every pass: the output, dv and the float64 references have the values' dim,
// the FLOPs count each matmul with its own.
TEST(CaseRunnerCpu, AValueHeadDimRunsEveryPassAgainstFloat64) {
  CaseRunner runner(Device::cpu(), small_settings(), 0);
  for (const std::string variant : {"naive", "naive_inplace", "sdpa_math"}) {
    for (const Pass pass : {Pass::forward, Pass::backward, Pass::forward_backward}) {
      SCOPED_TRACE(variant + " " + to_string(pass));
      Case c{0, variant, Shape{1, 4, 2, 32, 40, 24, {}, {}, 0, 8}, Dtype::fp32, true};
      c.pass = pass;
      const CaseResult r = runner.run(c);
      ASSERT_EQ(r.status, CaseStatus::ok) << r.error_message;
      EXPECT_EQ(r.numerics, NumericsVerdict::ok);
      EXPECT_DOUBLE_EQ(r.flops, pass_flops(c.shape, c.mask, pass));
      if (pass == Pass::forward) {
        ASSERT_TRUE(r.rel_error.has_value());
        EXPECT_LT(*r.rel_error, 1e-5);
        EXPECT_GT(*r.rel_error, 0.0);
        continue;
      }
      for (const auto& error : {r.grad_rel_error_q, r.grad_rel_error_k, r.grad_rel_error_v}) {
        ASSERT_TRUE(error.has_value());
        EXPECT_LT(*error, 1e-5);
      }
    }
  }
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
// most 1 GiB, every (batch, query head, query row) in exactly one chunk, and a
// small shape in one chunk per batch entry, as before chunks existed. Meta
// tensors: the shapes are Llama-3.1's long contexts, nothing is allocated.
TEST(ReferenceChunks, BoundTheFloat64ScoresAndCoverEveryHeadAndRowOnce) {
  const auto inputs_of = [](std::int64_t b, std::int64_t h, std::int64_t kv, std::int64_t s, std::int64_t d) {
    const auto options = at::TensorOptions().dtype(at::kBFloat16).device(at::kMeta);
    AttentionInputs inputs;
    inputs.query = at::empty({b, h, s, d}, options);
    inputs.key = at::empty({b, kv, s, d}, options);
    inputs.value = at::empty({b, kv, s, d}, options);
    inputs.masked_out = at::empty({s, s}, options.dtype(at::kBool));
    return inputs;
  };
  struct Expected {
    std::int64_t b, h, kv, s, chunks, kv_heads_per_chunk, rows_per_chunk;
  };
  for (const Expected& e : {Expected{8, 16, 16, 1024, 8, 16, 1024}, Expected{1, 32, 32, 8192, 16, 2, 8192},
                            Expected{2, 32, 8, 4096, 8, 2, 4096}, Expected{2, 16, 16, 4096, 4, 8, 4096},
                            // Issue 33, item 1: by heads alone one chunk of 64 GiB; now 512 rows of one group.
                            Expected{1, 64, 8, 32768, 8 * 64, 1, 512},
                            Expected{1, 64, 8, 65536, 8 * 256, 1, 256}, Expected{2, 64, 8, 32768, 2 * 8 * 64, 1, 512}}) {
    SCOPED_TRACE(std::to_string(e.b) + "x" + std::to_string(e.h) + "/" + std::to_string(e.kv) + "x" + std::to_string(e.s));
    const AttentionInputs inputs = inputs_of(e.b, e.h, e.kv, e.s, 128);
    const auto chunks = reference_chunks(inputs);
    ASSERT_EQ(static_cast<std::int64_t>(chunks.size()), e.chunks);
    std::vector<std::int64_t> rows_covered(static_cast<std::size_t>(e.b * e.kv), 0);
    for (const ReferenceChunk& chunk : chunks) {
      EXPECT_EQ(chunk.kv_heads, e.kv_heads_per_chunk);
      EXPECT_EQ(chunk.rows, e.rows_per_chunk);
      EXPECT_EQ(chunk.real_rows, chunk.rows);
      EXPECT_EQ(chunk.group, e.h / e.kv);
      EXPECT_LE(chunk.kv_heads * chunk.group * chunk.rows * e.s * 8, std::int64_t{1} << 30);
      const AttentionInputs piece = chunk.of(inputs);
      EXPECT_EQ(piece.query.size(1), chunk.kv_heads * chunk.group);
      EXPECT_EQ(piece.query.size(2), chunk.rows);
      EXPECT_EQ(piece.key.size(1), chunk.kv_heads);
      EXPECT_EQ(piece.key.size(2), e.s);  // every row sees all its keys
      EXPECT_EQ(piece.masked_out.size(0), chunk.rows);
      EXPECT_EQ(piece.grouped, e.h != e.kv);
      for (std::int64_t h = chunk.first_kv_head; h < chunk.first_kv_head + chunk.kv_heads; ++h) {
        std::int64_t& covered = rows_covered[static_cast<std::size_t>(chunk.batch * e.kv + h)];
        EXPECT_EQ(covered, chunk.first_row);  // in order, no gap, no overlap
        covered += chunk.rows;
      }
    }
    for (const std::int64_t rows : rows_covered) EXPECT_EQ(rows, e.s);
  }
}

// Split by rows, the references give the same errors as whole: the output's
// rows and dq are each chunk's own, dk and dv the sums over a key block's row
// chunks. Uneven rows (7 per chunk of 37), grouped heads, a causal window.
TEST(ReferenceChunks, RowChunksGiveTheSameErrorsAsOneChunk) {
  Shape shape{2, 4, 2, 37, 53, 16};
  Case c{0, "naive", shape, Dtype::bf16, Mask(CausalAlignment::bottom_right, 9, std::nullopt)};
  c.pass = Pass::backward;
  const AttentionInputs inputs = as_leaves(make_inputs(c, Device::cpu(), 7));
  const at::Tensor grad_output = make_grad_output(c, Device::cpu(), 7);
  const std::int64_t seven_rows = 2 * 53 * 8 * 7;  // a group of 2 query heads, 53 keys, 7 rows
  ASSERT_EQ(reference_chunks(inputs, seven_rows).size(), 2u * 2u * 6u);
  ASSERT_EQ(reference_chunks(inputs).size(), 2u);

  at::Tensor output;
  std::vector<at::Tensor> grads;
  {
    const at::AutoGradMode grad_on(true);
    output = naive_attention(inputs, MaskMode::out_of_place);
    grads = torch::autograd::grad({output}, {inputs.query, inputs.key, inputs.value}, {grad_output});
  }
  const at::NoGradGuard no_grad;
  const double whole = AccuracyCheck(Device::cpu()).relative_error(output, inputs);
  const double split = AccuracyCheck(Device::cpu(), seven_rows).relative_error(output, inputs);
  EXPECT_GT(whole, 1e-4);  // bf16's error, not zero: the comparison is not trivially equal
  EXPECT_NEAR(split, whole, whole * 1e-9);

  const std::array<at::Tensor, 3> grad_array{grads[0], grads[1], grads[2]};
  GradientCheck split_check(Device::cpu(), seven_rows);
  const GradientErrors by_rows = split_check.relative_errors(grad_array, inputs, grad_output);
  const GradientErrors by_heads = GradientCheck(Device::cpu()).relative_errors(grad_array, inputs, grad_output);
  for (const auto& [split_error, whole_error] : {std::pair{by_rows.query, by_heads.query},
                                                 std::pair{by_rows.key, by_heads.key},
                                                 std::pair{by_rows.value, by_heads.value}}) {
    EXPECT_GT(whole_error, 1e-4);
    EXPECT_NEAR(split_error, whole_error, whole_error * 1e-9);
  }
  // The second check of the same inputs reads the kept reference: the same errors.
  const GradientErrors again = split_check.relative_errors(grad_array, inputs, grad_output);
  EXPECT_DOUBLE_EQ(again.key, by_rows.key);
  EXPECT_DOUBLE_EQ(again.query, by_rows.query);
  // A wrong dk in the last row chunk's key block is seen: the sums are compared, not the last piece.
  std::array<at::Tensor, 3> wrong = grad_array;
  wrong[1] = grads[1].clone();
  wrong[1].narrow(0, 1, 1).mul_(1.5);
  EXPECT_GT(split_check.relative_errors(wrong, inputs, grad_output).key, 0.1);
}

}  // namespace
}  // namespace attnsweep
