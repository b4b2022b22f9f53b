// The example op library (examples/attention_op), loaded as attnsweep loads an
// op library: dlopen with RTLD_NOW | RTLD_GLOBAL, then the operators found by name
// in PyTorch's dispatcher. The forward's numerics are checked against PyTorch's
// scaled_dot_product_attention in float64; its gradients (through autograd, and
// attention_backward called directly) against float64 autograd of softmax(q k^T *
// scale + mask) v written out in ATen. On a GPU also the kernels each call launches.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/autograd.h>
#include <torch/cuda.h>

#include <dlfcn.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "runner/common/identities.hpp"
#include "runner/profile/event_attribution.hpp"
#include "runner/profile/kineto_profiler.hpp"

namespace attnsweep {
namespace {

constexpr const char* kSchema =
    "attnsweep_example::attention(Tensor q, Tensor k, Tensor v, bool is_causal=False, float? scale=None) -> Tensor";
constexpr const char* kBackwardSchema =
    "attnsweep_example::attention_backward(Tensor grad_out, Tensor q, Tensor k, Tensor v, bool is_causal=False, "
    "float? scale=None) -> (Tensor, Tensor, Tensor)";
// The backward refuses with the forward's words (and its name).
constexpr const char* kRefusalPrefix = "attnsweep_example::attention: ";

using AttentionFn = at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&, bool, std::optional<double>);
using AttentionBackwardFn = std::tuple<at::Tensor, at::Tensor, at::Tensor>(
    const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&, bool, std::optional<double>);

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

c10::OperatorHandle backward_handle() {
  return c10::Dispatcher::singleton().findSchemaOrThrow("attnsweep_example::attention_backward", "");
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> call_backward_op(const at::Tensor& grad_out, const at::Tensor& q,
                                                                const at::Tensor& k, const at::Tensor& v,
                                                                bool is_causal,
                                                                std::optional<double> scale = std::nullopt) {
  static const auto typed = backward_handle().typed<AttentionBackwardFn>();
  return typed.call(grad_out, q, k, v, is_causal, scale);
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

// ---- gradients -------------------------------------------------------------------

struct Gradients {
  at::Tensor q, k, v;
};

Gradients as_gradients(const std::tuple<at::Tensor, at::Tensor, at::Tensor>& grads) {
  return {std::get<0>(grads), std::get<1>(grads), std::get<2>(grads)};
}
Gradients as_gradients(const std::vector<at::Tensor>& grads) { return {grads.at(0), grads.at(1), grads.at(2)}; }

// The upstream gradient dO: seeded random (ones would hide a transposed or misplaced term), q's dtype and device.
at::Tensor upstream_gradient(const at::Tensor& q, uint64_t seed) {
  at::manual_seed(seed);
  return at::randn(q.sizes(), at::TensorOptions().dtype(at::kFloat)).to(q.device(), q.scalar_type());
}

// Leaves that require grad, sharing the inputs' values.
Inputs leaves(const Inputs& in) {
  return {in.q.detach().requires_grad_(), in.k.detach().requires_grad_(), in.v.detach().requires_grad_()};
}

// The op's gradients as autograd finds them: its Autograd kernel, whose backward is attention_backward.
Gradients autograd_gradients(const Inputs& in, const at::Tensor& grad_out, bool causal,
                             std::optional<double> scale) {
  const Inputs x = leaves(in);
  const at::Tensor out = call_op(x.q, x.k, x.v, causal, scale);
  return as_gradients(torch::autograd::grad({out}, {x.q, x.k, x.v}, {grad_out}));
}

// Float64 autograd through softmax(q k^T * scale + causal mask) v written out in ATen on the
// CPU (kv heads repeated for grouped-query attention), on the very values the op saw and the
// same upstream gradient.
Gradients reference_gradients(const Inputs& in, const at::Tensor& grad_out, bool causal,
                              std::optional<double> scale) {
  const auto leaf = [](const at::Tensor& t) { return t.detach().cpu().to(at::kDouble).requires_grad_(); };
  const at::Tensor q = leaf(in.q), k = leaf(in.k), v = leaf(in.v);
  const int64_t group = q.size(1) / k.size(1);
  const double softmax_scale = scale.value_or(1.0 / std::sqrt(static_cast<double>(q.size(3))));
  at::Tensor scores = at::matmul(q, k.repeat_interleave(group, 1).transpose(-2, -1)) * softmax_scale;
  if (causal) {
    const at::Tensor visible = at::ones({q.size(2), k.size(2)}, at::TensorOptions().dtype(at::kBool)).tril();
    scores = scores.masked_fill(visible.logical_not(), -std::numeric_limits<double>::infinity());
  }
  const at::Tensor out = at::matmul(at::softmax(scores, -1), v.repeat_interleave(group, 1));
  return as_gradients(torch::autograd::grad({out}, {q, k, v}, {grad_out.detach().cpu().to(at::kDouble)}));
}

// Relative error bounds of one gradient against float64, per dtype: the output's rounding
// dominates (bf16 keeps 8 bits, fp16 11); fp32 leaves the float32 arithmetic.
double gradient_tolerance(at::ScalarType dtype) {
  return dtype == at::kFloat ? 1e-4 : dtype == at::kBFloat16 ? 2e-2 : 3e-3;
}

std::string index_of(int64_t flat, at::IntArrayRef sizes) {
  std::vector<int64_t> index(sizes.size());
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    index[d] = flat % sizes[d];
    flat /= sizes[d];
  }
  std::ostringstream out;
  out << "[";
  for (size_t d = 0; d < index.size(); ++d) out << (d ? ", " : "") << index[d];
  out << "]";
  return out.str();
}

// `got` (the op's gradient of `input`) against float64 `expected`: dtype, device and shape of
// the input, and relative error (Frobenius norms) under `bound`. A failure says by how much,
// and where the two differ most.
testing::AssertionResult gradient_matches(const char* name, const at::Tensor& got, const at::Tensor& input,
                                          const at::Tensor& expected, double bound) {
  if (!got.defined()) return testing::AssertionFailure() << name << " is undefined";
  if (got.sizes() != input.sizes() || got.scalar_type() != input.scalar_type() || got.device() != input.device()) {
    return testing::AssertionFailure() << name << " is " << got.sizes() << " " << got.scalar_type() << " on "
                                       << got.device() << ", its input " << input.sizes() << " "
                                       << input.scalar_type() << " on " << input.device();
  }
  const at::Tensor got64 = got.detach().cpu().to(at::kDouble);
  const at::Tensor diff = got64 - expected;
  // A gradient that is exactly 0 (a causal row that sees key 0 only: P is one-hot, dS = 0)
  // is held to the bound in absolute terms.
  const double expected_norm = expected.norm().item<double>();
  const double error = diff.norm().item<double>() / (expected_norm > 0 ? expected_norm : 1.0);
  if (error < bound) return testing::AssertionSuccess();  // NaN fails here too
  const at::Tensor distance = diff.abs().nan_to_num(std::numeric_limits<double>::infinity());  // NaN counts as far
  const int64_t worst = distance.flatten().argmax().item<int64_t>();
  return testing::AssertionFailure() << name << (expected_norm > 0 ? " relative" : " absolute (float64 is 0)")
                                     << " error " << error << ", bound " << bound
                                     << "; largest difference at " << index_of(worst, got.sizes()) << ": "
                                     << got64.flatten()[worst].item<double>() << ", float64 "
                                     << expected.flatten()[worst].item<double>() << " (norms "
                                     << got64.norm().item<double>() << ", float64 " << expected.norm().item<double>()
                                     << ")";
}

void expect_gradients_match(const Gradients& got, const Inputs& in, const Gradients& expected, double bound,
                            const std::string& what) {
  EXPECT_TRUE(gradient_matches("dq", got.q, in.q, expected.q, bound)) << what;
  EXPECT_TRUE(gradient_matches("dk", got.k, in.k, expected.k, bound)) << what;
  EXPECT_TRUE(gradient_matches("dv", got.v, in.v, expected.v, bound)) << what;
}

// attention_backward called directly returns the very bits autograd returned: the Autograd
// kernel calls it with the same arguments, and both devices' kernels are deterministic.
void expect_same_bits(const Gradients& direct, const Gradients& through_autograd, const std::string& what) {
  EXPECT_TRUE(direct.q.defined() && at::equal(direct.q, through_autograd.q)) << "dq, direct call " << what;
  EXPECT_TRUE(direct.k.defined() && at::equal(direct.k, through_autograd.k)) << "dk, direct call " << what;
  EXPECT_TRUE(direct.v.defined() && at::equal(direct.v, through_autograd.v)) << "dv, direct call " << what;
}

// Every shape, causal and not, fp32/bf16/fp16 on `device`, plus an explicit scale: dq, dk and dv
// through autograd and through attention_backward called directly.
void check_gradients(const at::Device& device) {
  uint64_t seed = 1000;
  for (const Shape& s : shapes()) {
    for (const at::ScalarType dtype : {at::kFloat, at::kBFloat16, at::kHalf}) {
      for (const bool causal : {false, true}) {
        const std::string what = describe(s, dtype, causal);
        const Inputs in = make_inputs(s, dtype, device, seed++);
        const at::Tensor grad_out = upstream_gradient(in.q, seed++);
        const Gradients got = autograd_gradients(in, grad_out, causal, std::nullopt);
        expect_gradients_match(got, in, reference_gradients(in, grad_out, causal, std::nullopt),
                               gradient_tolerance(dtype), what);
        expect_same_bits(as_gradients(call_backward_op(grad_out, in.q, in.k, in.v, causal)), got, what);
      }
    }
  }
  const Inputs in = make_inputs({1, 4, 2, 20, 33, 64}, at::kFloat, device, 99);
  const at::Tensor grad_out = upstream_gradient(in.q, 98);
  for (const bool causal : {false, true}) {
    const std::string what = std::string("scale 0.3") + (causal ? " causal" : "");
    const Gradients got = autograd_gradients(in, grad_out, causal, 0.3);
    expect_gradients_match(got, in, reference_gradients(in, grad_out, causal, 0.3), 1e-4, what);
    expect_same_bits(as_gradients(call_backward_op(grad_out, in.q, in.k, in.v, causal, 0.3)), got, what);
  }
}

// out.sum().backward(): the upstream gradient autograd hands over is an expanded tensor
// (every stride 0), and the gradients land in the leaves' .grad().
void check_sum_backward(const at::Device& device) {
  const Inputs in = make_inputs({2, 4, 2, 37, 70, 64}, at::kFloat, device, 11);
  const Inputs x = leaves(in);
  call_op(x.q, x.k, x.v, /*is_causal=*/true).sum().backward();
  const at::Tensor ones = at::ones(in.q.sizes(), in.q.options());
  expect_gradients_match({x.q.grad(), x.k.grad(), x.v.grad()}, in, reference_gradients(in, ones, true, std::nullopt),
                         1e-4, "out.sum().backward()");
}

// The checks above run alike on the CPU and on a GPU: one test of each on each device,
// named after the check (ExampleOp/ExampleOpCheck.OnCpu/MatchesFloat64Sdpa, .OnCuda/...).
struct DeviceCheck {
  const char* name;
  void (*check)(const at::Device&);
};

void PrintTo(const DeviceCheck& check, std::ostream* out) { *out << check.name; }

const DeviceCheck kDeviceChecks[] = {
    {"MatchesFloat64Sdpa", check_numerics},
    {"CausalSingleQueryRowSeesOnlyKeyZero", check_single_causal_row_reads_key_zero},
    {"GradientsMatchFloat64Autograd", check_gradients},
    // On a GPU also: the expanded upstream gradient is read where it is (the CUDA kernels take grad_out's strides).
    {"SumBackwardFillsTheLeavesGrads", check_sum_backward},
};

class ExampleOpCheck : public ::testing::TestWithParam<DeviceCheck> {};

TEST_P(ExampleOpCheck, OnCpu) {
  LOAD_EXAMPLE_OP();
  GetParam().check(at::Device(at::kCPU));
}

TEST_P(ExampleOpCheck, OnCuda) {
  if (torch::cuda::device_count() == 0) GTEST_SKIP() << "no CUDA device here";
  LOAD_EXAMPLE_OP();
  GetParam().check(at::Device(at::kCUDA, 0));
}

INSTANTIATE_TEST_SUITE_P(ExampleOp, ExampleOpCheck, ::testing::ValuesIn(kDeviceChecks),
                         [](const ::testing::TestParamInfo<DeviceCheck>& info) {
                           return std::string(info.param.name);
                         });

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

TEST(ExampleOp, RegistersTheBackwardOpAndAnAutogradKernel) {
  LOAD_EXAMPLE_OP();
  const c10::OperatorHandle handle = backward_handle();
  EXPECT_EQ(c10::toString(handle.schema()), kBackwardSchema);
  EXPECT_TRUE(handle.hasKernelForDispatchKey(c10::DispatchKey::CPU));
  EXPECT_TRUE(handle.hasKernelForDispatchKey(c10::DispatchKey::CUDA));
  // What makes attention differentiable, as a caller can see it in the dispatcher (an alias key:
  // the one registration serves AutogradCPU, AutogradCUDA, ...). The backward has none: no double backward.
  EXPECT_TRUE(op_handle().hasKernelForDispatchKey(c10::DispatchKey::Autograd));
  EXPECT_FALSE(handle.hasKernelForDispatchKey(c10::DispatchKey::Autograd));
}

// Autograd finds the op's own Autograd kernel: the output's history is one node, attnsweep_example's
// AttentionFunction, whose inputs are q, k and v themselves. (Without that kernel, PyTorch's fallback
// recorded the ATen ops inside the CPU kernel instead, and nothing inside the CUDA one.)
TEST(ExampleOp, AutogradRecordsOneNodeOfTheOpOverQKAndV) {
  LOAD_EXAMPLE_OP();
  const Inputs x = leaves(make_inputs({1, 4, 2, 9, 12, 64}, at::kFloat, at::Device(at::kCPU), 4));
  const at::Tensor out = call_op(x.q, x.k, x.v, true);
  ASSERT_TRUE(out.requires_grad());
  ASSERT_NE(out.grad_fn(), nullptr);
  EXPECT_NE(out.grad_fn()->name().find("AttentionFunction"), std::string::npos) << out.grad_fn()->name();
  ASSERT_EQ(out.grad_fn()->num_outputs(), 3u) << "one edge per tensor input";
  for (uint32_t i = 0; i < 3; ++i) {
    const auto& edge = out.grad_fn()->next_edge(i);
    ASSERT_TRUE(edge.is_valid()) << "edge " << i;
    EXPECT_NE(edge.function->name().find("AccumulateGrad"), std::string::npos) << edge.function->name();
  }
}

TEST(ExampleOp, NothingIsRecordedWithoutAnInputRequiringGradOrWithGradModeOff) {
  LOAD_EXAMPLE_OP();
  const Inputs in = make_inputs({1, 4, 2, 9, 12, 64}, at::kFloat, at::Device(at::kCPU), 5);
  const at::Tensor plain = call_op(in.q, in.k, in.v, true);
  EXPECT_FALSE(plain.requires_grad());
  EXPECT_EQ(plain.grad_fn(), nullptr);
  const Inputs x = leaves(in);
  {
    const at::NoGradGuard no_grad;  // as attnsweep times forwards
    const at::Tensor out = call_op(x.q, x.k, x.v, true);
    EXPECT_FALSE(out.requires_grad());
    EXPECT_TRUE(at::equal(out, plain));
  }
  // Only v requiring grad: a node, and dv right.
  const at::Tensor v = in.v.detach().requires_grad_();
  const at::Tensor out = call_op(in.q, in.k, v, true);
  EXPECT_TRUE(at::equal(out.detach(), plain));
  const at::Tensor grad_out = upstream_gradient(in.q, 6);
  const at::Tensor grad_v = torch::autograd::grad({out}, {v}, {grad_out}).at(0);
  EXPECT_TRUE(gradient_matches("dv", grad_v, in.v, reference_gradients(in, grad_out, true, std::nullopt).v, 1e-4));
}

// Operator calls per profiled call of `work` on the CPU, by name, as attnsweep's ops table has them.
std::map<std::string, double> operator_calls(const std::function<void()>& work) {
  KinetoProfiler profiler(Device::cpu());
  profiler.warm_up(work);
  const ProfileSummary summary = attribute_events(profiler.profile(work, 3, ""), 3, /*device_is_cuda=*/false);
  std::map<std::string, double> calls;
  for (const OpStat& op : summary.ops) calls[op.name] = op.calls_per_forward;
  return calls;
}

// The Autograd kernel hands the call on with a redispatch, which the profiler does not record
// again: a forward is one call of the op, as before the kernel existed, with grad or without.
TEST(ExampleOp, AForwardIsOneCallOfTheOpOnCpu) {
  LOAD_EXAMPLE_OP();
  const Inputs in = make_inputs({1, 4, 2, 33, 40, 64}, at::kFloat, at::Device(at::kCPU), 7);
  const Inputs x = leaves(in);
  {
    const at::NoGradGuard no_grad;  // as attnsweep times forwards
    EXPECT_EQ(operator_calls([&] { call_op(x.q, x.k, x.v, true); })["attnsweep_example::attention"], 1) << "no grad";
  }
  EXPECT_EQ(operator_calls([&] { call_op(in.q, in.k, in.v, true); })["attnsweep_example::attention"], 1)
      << "no input requiring grad";
  EXPECT_EQ(operator_calls([&] { call_op(x.q, x.k, x.v, true); })["attnsweep_example::attention"], 1)
      << "recording for autograd";
}

// What attnsweep will time as the op's backward: one call of attention_backward and no forward again.
TEST(ExampleOp, BackwardIsOneCallOfAttentionBackwardOnCpu) {
  LOAD_EXAMPLE_OP();
  const Inputs in = make_inputs({1, 4, 2, 33, 40, 64}, at::kFloat, at::Device(at::kCPU), 8);
  const Inputs x = leaves(in);
  const at::Tensor grad_out = upstream_gradient(in.q, 9);
  const at::Tensor out = call_op(x.q, x.k, x.v, true);  // one forward that keeps its graph
  std::map<std::string, double> calls = operator_calls(
      [&] { torch::autograd::grad({out}, {x.q, x.k, x.v}, {grad_out}, /*retain_graph=*/true); });
  EXPECT_EQ(calls["attnsweep_example::attention_backward"], 1) << "calls per backward";
  EXPECT_EQ(calls.count("attnsweep_example::attention"), 0u) << "the forward ran again";
}

TEST(ExampleOp, BackwardRefusesWithTheForwardsMessages) {
  LOAD_EXAMPLE_OP();
  const auto options = at::TensorOptions().dtype(at::kFloat);
  const at::Tensor q = at::randn({1, 3, 8, 64}, options), kv = at::randn({1, 2, 8, 64}, options);
  EXPECT_REFUSED(call_backward_op(q, q, kv, kv, false), "must be a multiple of kv_heads");
  const at::Tensor q64 = at::randn({1, 2, 8, 64}, options.dtype(at::kDouble));
  EXPECT_REFUSED(call_backward_op(q64, q64, q64, q64, false), "dtype must be float32, bfloat16 or float16");
  const at::Tensor q4 = at::randn({1, 2, 8, 64}, options);
  EXPECT_REFUSED(call_backward_op(q4, q4, q4.to(at::kHalf), q4, false), "one dtype");
  EXPECT_REFUSED(call_backward_op(q4, q4, at::randn({1, 2, 8, 32}, options), at::randn({1, 2, 8, 32}, options), false),
                 "same head_dim");
  EXPECT_REFUSED(call_backward_op(q4.view({2, 8, 64}), q4.view({2, 8, 64}), q4, q4, false), "4-D");
  EXPECT_REFUSED(call_backward_op(q4, q4, q4, at::randn({1, 2, 9, 64}, options), false), "same shape");
  // What only the backward has: grad_out shaped and typed as the forward's output.
  EXPECT_REFUSED(call_backward_op(at::randn({1, 2, 7, 64}, options), q4, q4, q4, false),
                 "grad_out must have q's shape");
  EXPECT_REFUSED(call_backward_op(q4.to(at::kHalf), q4, q4, q4, false), "grad_out must have q's dtype");
}

// ---- on a GPU -----------------------------------------------------------------

// The GPU tests: skipped without a CUDA device, each with the op library loaded.
class GpuExampleOp : public ::testing::Test {
 protected:
  void SetUp() override {
    if (torch::cuda::device_count() == 0) GTEST_SKIP() << "no CUDA device here";
    LOAD_EXAMPLE_OP();
  }
};

// Each of the 3 profiled passes launched `kernels` kernels and no copy or memset, and every
// device event was attributed to a pass.
void expect_only_kernels(const ProfileSummary& summary, int kernels, const std::string& what) {
  EXPECT_EQ(summary.kernels_each_forward, (std::vector<int>{kernels, kernels, kernels})) << what;
  EXPECT_EQ(summary.memcpy_each_forward, (std::vector<int>{0, 0, 0})) << what;
  EXPECT_EQ(summary.memset_each_forward, (std::vector<int>{0, 0, 0})) << what;
  EXPECT_EQ(summary.unattributed_device_events, 0) << what;
}

// Profiles `work` 3 times on the GPU, each under its own label, after a warm-up session.
ProfileSummary profile_on_gpu(KinetoProfiler& profiler, const std::function<void()>& work) {
  profiler.warm_up(work);
  // CUPTI's teardown after the warm-up session completes in the next kernel launch: let
  // it happen here, not inside the profiled calls (seen on the H200: the first
  // session of a process after a warm-up recorded no kernels). A session that still
  // records nothing (Kineto drops records at times) is tried again, up to 3 times.
  work();
  torch::cuda::synchronize();
  ProfileSummary summary;
  for (int attempt = 1; attempt <= 3; ++attempt) {
    summary = attribute_events(profiler.profile(work, 3, ""), 3, /*device_is_cuda=*/true);
    if (!summary.kernels.empty()) break;
  }
  return summary;
}

// This process profiles sessions directly and then exits. With CUPTI torn down
// after each session (TEARDOWN_CUPTI=1, attnsweep's default) it hung at exit,
// after passing, in 3 of 20 runs on the H200 (the main thread on a futex,
// Kineto's and CUDA's threads polling); with 0 it hung in none of 12, and runs
// through the case runner in none of 6. The cause is not known (the team's
// notes); the counts are what these tests are about, so CUPTI stays attached.
void keep_cupti_attached() { setenv("TEARDOWN_CUPTI", "0", /*overwrite=*/1); }

TEST_F(GpuExampleOp, OneCallLaunchesExactlyOneKernelAndNothingElse) {
  keep_cupti_attached();
  KinetoProfiler profiler(Device::cuda(0));
  for (const at::ScalarType dtype : {at::kFloat, at::kBFloat16, at::kHalf}) {
    const Inputs in = make_inputs({2, 8, 2, 256, 256, 128}, dtype, at::Device(at::kCUDA, 0), 5);
    const ProfileSummary summary = profile_on_gpu(profiler, [&] { call_op(in.q, in.k, in.v, true); });
    const std::string what = c10::toString(dtype);
    expect_only_kernels(summary, 1, what);
    ASSERT_EQ(summary.kernels.size(), 1u) << what;
    EXPECT_NE(summary.kernels.front().name.find("attention_kernel"), std::string::npos) << summary.kernels.front().name;
    std::printf("%-9s kernel %s, %.1f us, grid %s block %s\n", what.c_str(), summary.kernels.front().name.c_str(),
                summary.kernels.front().mean_us, summary.kernels.front().grid.c_str(),
                summary.kernels.front().block.c_str());
  }
}

// The kernels of one pass, by kind of kernel, each with its launches per pass: "what differed"
// on failure names them all.
std::string kernels_of(const ProfileSummary& summary) {
  std::string listed;
  for (const KernelStat& kernel : summary.kernels) {
    listed += "\n  " + kernel.kind + " x" + std::to_string(kernel.launches_per_forward) + " " + kernel.name;
  }
  return listed.empty() ? " none" : listed;
}

// The backward after one forward that keeps its graph (as attnsweep will time it), attention_backward
// called directly, and a whole training step: the op's own kernels, one launch each, and no other GPU
// work (no copy, no memset, nothing of autograd's).
TEST_F(GpuExampleOp, BackwardLaunchesOnlyTheOpsTwoKernels) {
  keep_cupti_attached();
  KinetoProfiler profiler(Device::cuda(0));
  for (const at::ScalarType dtype : {at::kFloat, at::kBFloat16, at::kHalf}) {
    const Inputs in = make_inputs({2, 8, 2, 256, 256, 128}, dtype, at::Device(at::kCUDA, 0), 12);
    const Inputs x = leaves(in);
    const at::Tensor grad_out = upstream_gradient(in.q, 13);
    const at::Tensor out = call_op(x.q, x.k, x.v, true);  // untimed, keeps its graph
    struct Pass {
      const char* name;
      std::function<void()> work;
      std::vector<const char*> kernels;  // each launched once per pass
    };
    const std::vector<Pass> passes = {
        {"autograd backward",
         [&] { torch::autograd::grad({out}, {x.q, x.k, x.v}, {grad_out}, /*retain_graph=*/true); },
         {"attention_backward_query_kernel", "attention_backward_key_kernel"}},
        {"attention_backward called directly", [&] { call_backward_op(grad_out, in.q, in.k, in.v, true); },
         {"attention_backward_query_kernel", "attention_backward_key_kernel"}},
        {"forward and backward",
         [&] { torch::autograd::grad({call_op(x.q, x.k, x.v, true)}, {x.q, x.k, x.v}, {grad_out}); },
         {"attention_kernel", "attention_backward_query_kernel", "attention_backward_key_kernel"}},
    };
    for (const Pass& pass : passes) {
      const ProfileSummary summary = profile_on_gpu(profiler, pass.work);
      const std::string what =
          std::string(c10::toString(dtype)) + ", " + pass.name + "; kernels:" + kernels_of(summary);
      expect_only_kernels(summary, static_cast<int>(pass.kernels.size()), what);
      EXPECT_EQ(summary.kernels.size(), pass.kernels.size()) << what;
      for (const char* name : pass.kernels) {
        int found = 0;
        for (const KernelStat& kernel : summary.kernels) {
          // "attention_kernel" is no substring of the backward kernels' names.
          if (kernel.kind == "kernel" && kernel.name.find(name) != std::string::npos) {
            ++found;
            EXPECT_EQ(kernel.launches_per_forward, 1) << name << ", " << what;
            std::printf("%-9s %-34s %-31s %8.1f us, grid %s block %s\n", c10::toString(dtype), pass.name, name,
                        kernel.mean_us, kernel.grid.c_str(), kernel.block.c_str());
          }
        }
        EXPECT_EQ(found, 1) << name << ", " << what;
      }
    }
  }
}

TEST_F(GpuExampleOp, RefusesWhatTheKernelCannotDo) {
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

TEST_F(GpuExampleOp, BackwardRefusesWhatTheKernelsCannotDo) {
  const auto cuda = at::TensorOptions().dtype(at::kHalf).device(at::kCUDA, 0);
  const at::Tensor wide = at::randn({1, 2, 8, 256}, cuda);
  EXPECT_REFUSED(call_backward_op(wide, wide, wide, wide, false), "head_dim must be at most 128");
  const at::Tensor q = at::randn({1, 2, 64, 8}, cuda).transpose(2, 3);  // [1, 2, 8, 64], not contiguous
  EXPECT_REFUSED(call_backward_op(q.contiguous(), q, q, q, false), "contiguous");
  const at::Tensor q_gpu = at::randn({1, 2, 8, 64}, cuda);
  EXPECT_REFUSED(call_backward_op(q_gpu, q_gpu, q_gpu.cpu(), q_gpu, false), "must all be CUDA tensors");
  EXPECT_REFUSED(call_backward_op(q_gpu.cpu(), q_gpu, q_gpu, q_gpu, false), "grad_out must be on q's device");
  EXPECT_REFUSED(call_backward_op(q_gpu.to(at::kFloat), q_gpu, q_gpu, q_gpu, false), "grad_out must have q's dtype");
  const at::Tensor q3 = at::randn({1, 3, 8, 64}, cuda), kv2 = at::randn({1, 2, 8, 64}, cuda);
  EXPECT_REFUSED(call_backward_op(q3, q3, kv2, kv2, false), "must be a multiple of kv_heads");
}

}  // namespace
}  // namespace attnsweep
