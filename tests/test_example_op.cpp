// The example op library (examples/attention_op), loaded as attnsweep loads an
// op library: dlopen with RTLD_NOW | RTLD_GLOBAL, then the operator found by name
// in PyTorch's dispatcher. Its numerics are checked against PyTorch's
// scaled_dot_product_attention in float64; on a GPU also its one kernel launch.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/cuda.h>

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "runner/common/identities.hpp"
#include "runner/profile/event_attribution.hpp"
#include "runner/profile/kineto_profiler.hpp"

namespace attnsweep {
namespace {

constexpr const char* kSchema =
    "attnsweep_example::attention(Tensor q, Tensor k, Tensor v, bool is_causal=False, float? scale=None) -> Tensor";
constexpr const char* kRefusalPrefix = "attnsweep_example::attention: ";

using AttentionFn = at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&, bool, std::optional<double>);

// dlopen once per process; "" when loaded, else dlerror's message.
const std::string& load_error() {
  static const std::string error = [] {
    void* handle = dlopen(ATTNSWEEP_EXAMPLE_OP_LIBRARY, RTLD_NOW | RTLD_GLOBAL);
    return handle ? std::string() : std::string(dlerror());
  }();
  return error;
}

c10::OperatorHandle op_handle() {
  return c10::Dispatcher::singleton().findSchemaOrThrow("attnsweep_example::attention", "");
}

at::Tensor call_op(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, bool is_causal,
                   std::optional<double> scale = std::nullopt) {
  static const auto typed = op_handle().typed<AttentionFn>();
  return typed.call(q, k, v, is_causal, scale);
}

#define LOAD_EXAMPLE_OP() ASSERT_EQ(load_error(), "") << "dlopen " ATTNSWEEP_EXAMPLE_OP_LIBRARY

struct Shape {
  int64_t batch, heads, kv_heads, seq_q, seq_kv, head_dim;
};

std::string describe(const Shape& s, at::ScalarType dtype, bool causal) {
  return std::to_string(s.batch) + "x" + std::to_string(s.heads) + "/" + std::to_string(s.kv_heads) + " q" +
         std::to_string(s.seq_q) + " kv" + std::to_string(s.seq_kv) + " d" + std::to_string(s.head_dim) + " " +
         c10::toString(dtype) + (causal ? " causal" : "");
}

const std::vector<Shape>& shapes() {
  static const std::vector<Shape> all = {
      {2, 4, 4, 64, 64, 64},    // plain multi-head
      {2, 4, 2, 37, 70, 64},    // grouped-query, seq_q < seq_kv
      {1, 4, 2, 70, 37, 128},   // grouped-query, seq_q > seq_kv
      {2, 8, 2, 1, 50, 128},    // decoding: one query row
      {1, 6, 3, 45, 45, 80},    // head_dim not a power of two
      {1, 2, 1, 130, 300, 128}, // several key tiles and query blocks on the GPU
  };
  return all;
}

struct Inputs {
  at::Tensor q, k, v;
};

Inputs make_inputs(const Shape& s, at::ScalarType dtype, const at::Device& device, uint64_t seed) {
  at::manual_seed(seed);
  const auto options = at::TensorOptions().dtype(at::kFloat);
  Inputs in;
  in.q = at::randn({s.batch, s.heads, s.seq_q, s.head_dim}, options).to(device, dtype);
  in.k = at::randn({s.batch, s.kv_heads, s.seq_kv, s.head_dim}, options).to(device, dtype);
  in.v = at::randn({s.batch, s.kv_heads, s.seq_kv, s.head_dim}, options).to(device, dtype);
  return in;
}

// PyTorch's own attention in float64 on the CPU, on the very values the op saw.
at::Tensor reference(const Inputs& in, bool causal, std::optional<double> scale) {
  const at::Tensor q = in.q.cpu().to(at::kDouble), k = in.k.cpu().to(at::kDouble), v = in.v.cpu().to(at::kDouble);
  return at::scaled_dot_product_attention(q, k, v, /*attn_mask=*/{}, /*dropout_p=*/0.0, causal, scale,
                                          /*enable_gqa=*/q.size(1) != k.size(1));
}

double relative_error(const at::Tensor& out, const at::Tensor& ref) {
  const at::Tensor diff = out.cpu().to(at::kDouble) - ref;
  return diff.norm().item<double>() / ref.norm().item<double>();
}

double tolerance(at::ScalarType dtype) { return dtype == at::kFloat ? 1e-5 : 2e-2; }

// Every shape, causal and not, fp32/bf16/fp16 on `device`, plus an explicit scale.
void check_numerics(const at::Device& device) {
  uint64_t seed = 1;
  for (const Shape& s : shapes()) {
    for (const at::ScalarType dtype : {at::kFloat, at::kBFloat16, at::kHalf}) {
      for (const bool causal : {false, true}) {
        const Inputs in = make_inputs(s, dtype, device, seed++);
        const at::Tensor out = call_op(in.q, in.k, in.v, causal);
        const std::string what = describe(s, dtype, causal);
        ASSERT_EQ(out.sizes(), in.q.sizes()) << what;
        EXPECT_EQ(out.scalar_type(), dtype) << what;
        EXPECT_EQ(out.device(), device) << what;
        EXPECT_LT(relative_error(out, reference(in, causal, std::nullopt)), tolerance(dtype)) << what;
      }
    }
  }
  const Inputs in = make_inputs({1, 4, 2, 20, 33, 64}, at::kFloat, device, 99);
  for (const bool causal : {false, true}) {
    const at::Tensor out = call_op(in.q, in.k, in.v, causal, 0.3);
    EXPECT_LT(relative_error(out, reference(in, causal, 0.3)), 1e-5) << "scale 0.3, causal " << causal;
  }
}

// Top-left causal mask: a single query row sees key 0 only, so it returns v's first row
// (of its kv head: query heads 0..3 read kv head 0, heads 4..7 kv head 1).
void check_single_causal_row_reads_key_zero(const at::Device& device) {
  const Inputs in = make_inputs({2, 8, 2, 1, 50, 64}, at::kFloat, device, 7);
  const at::Tensor out = call_op(in.q, in.k, in.v, /*is_causal=*/true);
  const at::Tensor expected = in.v.narrow(2, 0, 1).repeat_interleave(4, /*dim=*/1);
  EXPECT_TRUE(at::allclose(out.cpu(), expected.cpu(), 1e-6, 1e-6));
}

// Runs `body`, which must throw c10::Error with the op's prefix; returns the message.
template <typename Body>
std::string refusal(Body body) {
  try {
    body();
  } catch (const c10::Error& error) {
    return error.what_without_backtrace();
  }
  return "(no error)";
}

#define EXPECT_REFUSED(call, words)                                                 \
  do {                                                                              \
    const std::string message = refusal([&] { call; });                             \
    EXPECT_EQ(message.rfind(kRefusalPrefix, 0), 0u) << message;                     \
    EXPECT_NE(message.find(words), std::string::npos) << message;                   \
    EXPECT_EQ(message.find('\n'), std::string::npos) << "not one line: " << message; \
  } while (0)

TEST(ExampleOp, LoadsAndRegistersTheSchemaWithCpuAndCudaKernels) {
  LOAD_EXAMPLE_OP();
  const c10::OperatorHandle handle = op_handle();
  EXPECT_EQ(c10::toString(handle.schema()), kSchema);
  EXPECT_TRUE(handle.hasKernelForDispatchKey(c10::DispatchKey::CPU));
  EXPECT_TRUE(handle.hasKernelForDispatchKey(c10::DispatchKey::CUDA));  // registered even where no GPU is
  // A second dlopen (another config naming the same library) finds it loaded and registers nothing twice.
  void* again = dlopen(ATTNSWEEP_EXAMPLE_OP_LIBRARY, RTLD_NOW | RTLD_GLOBAL);
  ASSERT_NE(again, nullptr) << dlerror();
  EXPECT_EQ(c10::toString(op_handle().schema()), kSchema);
}

TEST(ExampleOp, MatchesFloat64SdpaOnCpu) {
  LOAD_EXAMPLE_OP();
  check_numerics(at::Device(at::kCPU));
}

TEST(ExampleOp, CausalSingleQueryRowSeesOnlyKeyZeroOnCpu) {
  LOAD_EXAMPLE_OP();
  check_single_causal_row_reads_key_zero(at::Device(at::kCPU));
}

TEST(ExampleOp, DefaultsThroughTheBoxedCall) {
  LOAD_EXAMPLE_OP();
  // As a caller that knows only the schema: q, k, v on the stack, defaults filled in.
  const Inputs in = make_inputs({1, 4, 2, 9, 12, 64}, at::kFloat, at::Device(at::kCPU), 3);
  std::vector<c10::IValue> stack{in.q, in.k, in.v, false, c10::IValue()};
  op_handle().callBoxed(stack);
  ASSERT_EQ(stack.size(), 1u);
  EXPECT_LT(relative_error(stack[0].toTensor(), reference(in, false, std::nullopt)), 1e-5);
}

TEST(ExampleOp, RefusesWithAOneLineMessageStartingWithItsName) {
  LOAD_EXAMPLE_OP();
  const auto options = at::TensorOptions().dtype(at::kFloat);
  const at::Tensor q = at::randn({1, 3, 8, 64}, options), kv = at::randn({1, 2, 8, 64}, options);
  EXPECT_REFUSED(call_op(q, kv, kv, false), "must be a multiple of kv_heads");
  const at::Tensor q64 = at::randn({1, 2, 8, 64}, options.dtype(at::kDouble));
  EXPECT_REFUSED(call_op(q64, q64, q64, false), "dtype must be float32, bfloat16 or float16");
  const at::Tensor q4 = at::randn({1, 2, 8, 64}, options);
  EXPECT_REFUSED(call_op(q4, q4.to(at::kHalf), q4, false), "one dtype");
  EXPECT_REFUSED(call_op(q4, at::randn({1, 2, 8, 32}, options), at::randn({1, 2, 8, 32}, options), false),
                 "same head_dim");
  EXPECT_REFUSED(call_op(q4.view({2, 8, 64}), q4, q4, false), "4-D");
  EXPECT_REFUSED(call_op(q4, q4, at::randn({1, 2, 9, 64}, options), false), "same shape");
}

// ---- on a GPU -----------------------------------------------------------------

#define SKIP_WITHOUT_CUDA() \
  if (torch::cuda::device_count() == 0) GTEST_SKIP() << "no CUDA device here"

TEST(GpuExampleOp, MatchesFloat64SdpaOnCuda) {
  SKIP_WITHOUT_CUDA();
  LOAD_EXAMPLE_OP();
  check_numerics(at::Device(at::kCUDA, 0));
}

TEST(GpuExampleOp, CausalSingleQueryRowSeesOnlyKeyZeroOnCuda) {
  SKIP_WITHOUT_CUDA();
  LOAD_EXAMPLE_OP();
  check_single_causal_row_reads_key_zero(at::Device(at::kCUDA, 0));
}

TEST(GpuExampleOp, OneCallLaunchesExactlyOneKernelAndNothingElse) {
  SKIP_WITHOUT_CUDA();
  LOAD_EXAMPLE_OP();
  // This process profiles nine sessions directly and then exits. With CUPTI torn
  // down after each session (TEARDOWN_CUPTI=1, attnsweep's default) it hung at
  // exit, after passing, in 3 of 20 runs on the H200 (the main thread on a
  // futex, Kineto's and CUDA's threads polling); with 0 it hung in none of 12,
  // and runs through the case runner in none of 6. The cause is not known (the
  // team's notes); the count is what this test is about, so CUPTI stays attached.
  setenv("TEARDOWN_CUPTI", "0", /*overwrite=*/1);
  KinetoProfiler profiler(Device::cuda(0));
  for (const at::ScalarType dtype : {at::kFloat, at::kBFloat16, at::kHalf}) {
    const Inputs in = make_inputs({2, 8, 2, 256, 256, 128}, dtype, at::Device(at::kCUDA, 0), 5);
    const auto forward = [&] { call_op(in.q, in.k, in.v, true); };
    profiler.warm_up(forward);
    // CUPTI's teardown after the warm-up session completes in the next kernel launch: let
    // it happen here, not inside the profiled forwards (seen on the H200: the first
    // session of a process after a warm-up recorded no kernels). A session that still
    // records nothing (Kineto drops records at times) is tried again, up to 3 times.
    forward();
    torch::cuda::synchronize();
    ProfileSummary summary;
    for (int attempt = 1; attempt <= 3; ++attempt) {
      summary = attribute_events(profiler.profile(forward, 3, ""), 3, /*device_is_cuda=*/true);
      if (!summary.kernels.empty()) break;
    }
    const std::string what = c10::toString(dtype);
    EXPECT_EQ(summary.kernels_each_forward, (std::vector<int>{1, 1, 1})) << what;
    EXPECT_EQ(summary.memcpy_each_forward, (std::vector<int>{0, 0, 0})) << what;
    EXPECT_EQ(summary.memset_each_forward, (std::vector<int>{0, 0, 0})) << what;
    EXPECT_EQ(summary.unattributed_device_events, 0) << what;
    ASSERT_EQ(summary.kernels.size(), 1u) << what;
    EXPECT_NE(summary.kernels.front().name.find("attention_kernel"), std::string::npos) << summary.kernels.front().name;
    std::printf("%-9s kernel %s, %.1f us, grid %s block %s\n", what.c_str(), summary.kernels.front().name.c_str(),
                summary.kernels.front().mean_us, summary.kernels.front().grid.c_str(),
                summary.kernels.front().block.c_str());
  }
}

TEST(GpuExampleOp, RefusesWhatTheKernelCannotDo) {
  SKIP_WITHOUT_CUDA();
  LOAD_EXAMPLE_OP();
  const auto cuda = at::TensorOptions().dtype(at::kHalf).device(at::kCUDA, 0);
  const at::Tensor wide = at::randn({1, 2, 8, 256}, cuda);
  EXPECT_REFUSED(call_op(wide, wide, wide, false), "head_dim must be at most 128");
  const at::Tensor q = at::randn({1, 2, 64, 8}, cuda).transpose(2, 3);  // [1, 2, 8, 64], not contiguous
  EXPECT_REFUSED(call_op(q, q, q, false), "contiguous");
  const at::Tensor q_gpu = at::randn({1, 2, 8, 64}, cuda);
  EXPECT_REFUSED(call_op(q_gpu, q_gpu.cpu(), q_gpu, false), "must all be CUDA tensors");
  const at::Tensor q3 = at::randn({1, 3, 8, 64}, cuda), kv2 = at::randn({1, 2, 8, 64}, cuda);
  EXPECT_REFUSED(call_op(q3, kv2, kv2, false), "must be a multiple of kv_heads");
  const at::Tensor q64 = at::randn({1, 2, 8, 64}, cuda.dtype(at::kDouble));
  EXPECT_REFUSED(call_op(q64, q64, q64, false), "dtype must be float32, bfloat16 or float16");
}

}  // namespace
}  // namespace attnsweep
