// attnsweep_example::attention: a small PyTorch op library, loaded at run time.
//
// This file declares the operator's schema, checks what both kernels need, and
// holds the CPU kernel. The CUDA kernel is in attention_op.cu. Nothing here
// needs a header: a program loads the shared object (dlopen, or
// torch.ops.load_library in Python), whose static registrations below add the
// operator to PyTorch's dispatcher, and calls it from there by name.
//
//   attention(Tensor q, Tensor k, Tensor v, bool is_causal=False, float? scale=None) -> Tensor
//
//   q [batch, heads, seq_q, head_dim], k and v [batch, kv_heads, seq_kv, head_dim],
//   heads % kv_heads == 0 (query head h reads kv head h / (heads / kv_heads)).
//   Output [batch, heads, seq_q, head_dim] in q's dtype. scale defaults to
//   1/sqrt(head_dim); is_causal masks as PyTorch's scaled_dot_product_attention
//   does (top left: query i sees keys j <= i).
#include <ATen/ATen.h>
#include <torch/library.h>

#include <cmath>
#include <limits>
#include <optional>

// Every refusal starts with the operator's name: a caller (attnsweep) stores the
// message as the reason the case is unsupported.
#define ATTENTION_CHECK(condition, ...) TORCH_CHECK(condition, "attnsweep_example::attention: ", __VA_ARGS__)

namespace attnsweep_example {

// The checks both kernels share; attention_op.cu declares it too.
void check_attention_inputs(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
  ATTENTION_CHECK(q.dim() == 4 && k.dim() == 4 && v.dim() == 4,
                  "q, k and v must be 4-D [batch, heads, seq, head_dim], got ", q.sizes(), ", ", k.sizes(), ", ",
                  v.sizes());
  ATTENTION_CHECK(k.sizes() == v.sizes(), "k and v must have the same shape, got ", k.sizes(), " and ", v.sizes());
  ATTENTION_CHECK(q.size(0) == k.size(0), "q and k must have the same batch, got ", q.size(0), " and ", k.size(0));
  ATTENTION_CHECK(q.size(3) == k.size(3), "q and k must have the same head_dim, got ", q.size(3), " and ",
                  k.size(3));
  ATTENTION_CHECK(q.size(3) >= 1, "head_dim must be at least 1");
  ATTENTION_CHECK(k.size(2) >= 1, "k and v need at least one key (seq_kv is 0)");
  ATTENTION_CHECK(k.size(1) >= 1 && q.size(1) % k.size(1) == 0, "heads (", q.size(1),
                  ") must be a multiple of kv_heads (", k.size(1), ")");
  const auto dtype = q.scalar_type();
  ATTENTION_CHECK(dtype == at::kFloat || dtype == at::kBFloat16 || dtype == at::kHalf,
                  "dtype must be float32, bfloat16 or float16, got ", dtype);
  ATTENTION_CHECK(k.scalar_type() == dtype && v.scalar_type() == dtype, "q, k and v must have one dtype, got ", dtype,
                  ", ", k.scalar_type(), ", ", v.scalar_type());
}

double default_scale(const at::Tensor& q, std::optional<double> scale) {
  return scale.has_value() ? *scale : 1.0 / std::sqrt(static_cast<double>(q.size(3)));
}

namespace {

// The CPU kernel: plain ATen ops in float32, clarity over speed.
at::Tensor attention_cpu(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, bool is_causal,
                         std::optional<double> scale) {
  check_attention_inputs(q, k, v);
  const int64_t group = q.size(1) / k.size(1);  // query heads per kv head
  const at::Tensor q32 = q.to(at::kFloat);
  const at::Tensor k32 = k.to(at::kFloat).repeat_interleave(group, /*dim=*/1);  // kv head h/group for head h
  const at::Tensor v32 = v.to(at::kFloat).repeat_interleave(group, /*dim=*/1);

  at::Tensor scores = at::matmul(q32, k32.transpose(-2, -1)) * default_scale(q, scale);
  if (is_causal) {
    // Top left, as PyTorch's is_causal: query i sees keys 0..i, whatever seq_q and seq_kv are.
    const at::Tensor visible = at::ones({q.size(2), k.size(2)}, q.options().dtype(at::kBool)).tril();
    scores.masked_fill_(visible.logical_not(), -std::numeric_limits<float>::infinity());
  }
  return at::matmul(at::softmax(scores, -1), v32).to(q.scalar_type());
}

}  // namespace
}  // namespace attnsweep_example

TORCH_LIBRARY(attnsweep_example, m) {
  m.def("attention(Tensor q, Tensor k, Tensor v, bool is_causal=False, float? scale=None) -> Tensor");
}

TORCH_LIBRARY_IMPL(attnsweep_example, CPU, m) { m.impl("attention", &attnsweep_example::attention_cpu); }
