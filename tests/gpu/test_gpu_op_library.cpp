// An op_library variant measured by attnsweep's own case runner, with the
// example op library (examples/attention_op): on the CPU here and in CI, and on
// the GPU where one exists (the GpuOpLibrary tests skip elsewhere): numerics
// against float64, kernels per forward from the profiler, and the op's own
// refusal as the 'unsupported' reason.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "runner/device/device.hpp"
#include "runner/measure/case_runner.hpp"
#include "runner/variants/op_library.hpp"
#include "tests/support/few_samples.hpp"

namespace attnsweep {
namespace {

OpLibrarySpec example_spec() {
  OpLibrarySpec spec;
  spec.name = "example";
  spec.library = spec.library_as_written = ATTNSWEEP_EXAMPLE_OP_LIBRARY;
  spec.op = "attnsweep_example::attention";
  spec.causal_argument = "is_causal";
  spec.scale_argument = "scale";
  return spec;
}

// Warm-up 2, 5 to 20 samples, at most 2 s, 3 profiled forwards.
MeasureSettings quick() { return attnsweep::testing::few_samples(2, 5, 20, 2, 3); }

CaseResult run_example(const Device& device, const Shape& shape, Dtype dtype, bool causal, Pass pass = Pass::forward) {
  register_op_library_specs({{"example", example_spec()}});
  CaseRunner runner(device, quick(), 0);
  Case c{0, "example", shape, dtype, causal};
  c.pass = pass;
  return runner.run(c);
}

TEST(OpLibraryVariant, TheExampleOpRunsThroughTheCaseRunnerOnTheCpu) {
  const CaseResult fp32 = run_example(Device::cpu(), Shape{1, 4, 2, 64, 64, 32}, Dtype::fp32, true);
  ASSERT_EQ(fp32.status, CaseStatus::ok) << fp32.error_message;
  ASSERT_TRUE(fp32.rel_error.has_value());
  EXPECT_LT(*fp32.rel_error, 1e-5);
  ASSERT_TRUE(fp32.cpu_time_us.has_value());
  EXPECT_GT(fp32.cpu_time_us->median, 0);
  const CaseResult bf16 = run_example(Device::cpu(), Shape{2, 4, 4, 1, 96, 64}, Dtype::bf16, false);
  ASSERT_EQ(bf16.status, CaseStatus::ok) << bf16.error_message;
  EXPECT_LT(*bf16.rel_error, 2e-2);
}

TEST(GpuOpLibrary, TheExampleOpIsOneKernelAndMatchesFloat64OnTheGpu) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device here";
  for (const Dtype dtype : {Dtype::fp32, Dtype::bf16, Dtype::fp16}) {
    for (const bool causal : {true, false}) {
      SCOPED_TRACE(std::string(to_string(dtype)) + (causal ? " causal" : ""));
      const CaseResult r = run_example(Device::cuda(0), Shape{2, 8, 4, 512, 512, 64}, dtype, causal);
      ASSERT_EQ(r.status, CaseStatus::ok) << r.error_message;
      ASSERT_TRUE(r.profile.has_value());
      EXPECT_EQ(r.profile->kernels_each_forward, (std::vector<int>{1, 1, 1}));
      EXPECT_EQ(r.profile->memcpy_each_forward, (std::vector<int>{0, 0, 0}));
      EXPECT_EQ(r.profile->memset_each_forward, (std::vector<int>{0, 0, 0}));
      EXPECT_LT(*r.rel_error, dtype == Dtype::fp32 ? 1e-5 : 2e-2);
      std::printf("example op %s %s: median %.1f us, rel error %.2e\n", to_string(dtype), causal ? "causal" : "full",
                  r.gpu_time_us->median, *r.rel_error);
    }
  }
}

// Issue 23: the op library's backward through its Autograd kernel, on the GPU:
// exactly the op's two backward kernels per backward, its forward kernel plus
// those two per training step, gradients within the dtype's bound of float64
// autograd, and a CUDA graph of the backward replayed.
TEST(GpuOpLibrary, TheExampleOpsBackwardIsItsTwoKernelsAndMatchesFloat64Autograd) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device here";
  for (const Dtype dtype : {Dtype::fp32, Dtype::bf16}) {
    SCOPED_TRACE(to_string(dtype));
    const Shape shape{2, 8, 4, 512, 512, 64};
    const CaseResult backward = run_example(Device::cuda(0), shape, dtype, true, Pass::backward);
    ASSERT_EQ(backward.status, CaseStatus::ok) << backward.error_message;
    EXPECT_EQ(backward.profile->kernels_each_forward, (std::vector<int>{2, 2, 2}));
    EXPECT_EQ(backward.profile->memcpy_each_forward, (std::vector<int>{0, 0, 0}));
    const CaseResult step = run_example(Device::cuda(0), shape, dtype, true, Pass::forward_backward);
    ASSERT_EQ(step.status, CaseStatus::ok) << step.error_message;
    EXPECT_EQ(step.profile->kernels_each_forward, (std::vector<int>{3, 3, 3}));
    for (const CaseResult* r : {&backward, &step}) {
      EXPECT_EQ(r->numerics, NumericsVerdict::ok);
      for (const auto& error : {r->grad_rel_error_q, r->grad_rel_error_k, r->grad_rel_error_v}) {
        ASSERT_TRUE(error.has_value());
        EXPECT_LT(*error, dtype == Dtype::fp32 ? 1e-5 : 2e-2);
      }
      EXPECT_TRUE(r->graph_time_us.has_value()) << r->graph_error;
    }
    std::printf("example op backward %s: %.1f us (graph %.1f), dq/dk/dv errors %.2e %.2e %.2e\n", to_string(dtype),
                backward.gpu_time_us->median, backward.graph_time_us ? backward.graph_time_us->median : -1.0,
                *backward.grad_rel_error_q, *backward.grad_rel_error_k, *backward.grad_rel_error_v);
  }
}

// head_dim 256 is over the example's CUDA limit: the op's own words become the reason.
TEST(GpuOpLibrary, AnOpsRefusalIsUnsupportedWithItsOwnMessage) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device here";
  const CaseResult r = run_example(Device::cuda(0), Shape{1, 2, 2, 64, 64, 256}, Dtype::bf16, true);
  EXPECT_EQ(r.status, CaseStatus::unsupported) << r.error_message;
  EXPECT_EQ(r.error_message.rfind("attnsweep_example::attention: ", 0), 0u) << r.error_message;
}

}  // namespace
}  // namespace attnsweep
