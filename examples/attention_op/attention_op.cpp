// attnsweep_example::attention: a small PyTorch op library, loaded at run time.
//
// This file declares the operators' schemas, checks what every kernel needs,
// holds the CPU kernels and the Autograd kernel. The CUDA kernels are in
// attention_op.cu. Nothing here needs a header: a program loads the shared
// object (dlopen, or torch.ops.load_library in Python), whose static
// registrations below add the operators to PyTorch's dispatcher, and calls them
// from there by name.
//
//   attention(Tensor q, Tensor k, Tensor v, bool is_causal=False, float? scale=None) -> Tensor
//   attention_backward(Tensor grad_out, Tensor q, Tensor k, Tensor v, bool is_causal=False,
//                      float? scale=None) -> (Tensor, Tensor, Tensor)
//
//   q [batch, heads, seq_q, head_dim], k and v [batch, kv_heads, seq_kv, head_dim],
//   heads % kv_heads == 0 (query head h reads kv head h / (heads / kv_heads)).
//   Output [batch, heads, seq_q, head_dim] in q's dtype. scale defaults to
//   1/sqrt(head_dim); is_causal masks as PyTorch's scaled_dot_product_attention
//   does (top left: query i sees keys j <= i).
//
//   attention_backward takes the gradient of attention's output (grad_out, q's
//   shape and dtype) and the forward's arguments, and returns the gradients of
//   q, k and v (dq, dk, dv), each in its input's shape and dtype. It recomputes
//   the softmax: the forward saves nothing but its inputs. The Autograd kernel
//   at the end of this file connects the two, so that autograd (C++ or Python)
//   differentiates attention.
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/autograd.h>
#include <torch/library.h>

#include <cmath>
#include <limits>
#include <optional>
#include <tuple>

// Every refusal starts with the operator's name: a caller (attnsweep) stores the
// message as the reason the case is unsupported. The backward refuses with the
// forward's words: autograd reaches it only with inputs the forward took.
#define ATTENTION_CHECK(condition, ...) TORCH_CHECK(condition, "attnsweep_example::attention: ", __VA_ARGS__)

namespace attnsweep_example {

// The checks every kernel shares; attention_op.cu declares them too.
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

// What the backward adds: grad_out is shaped as the forward's output (any strides).
void check_grad_out(const at::Tensor& grad_out, const at::Tensor& q) {
  ATTENTION_CHECK(grad_out.sizes() == q.sizes(), "grad_out must have q's shape ", q.sizes(), ", got ",
                  grad_out.sizes());
  ATTENTION_CHECK(grad_out.scalar_type() == q.scalar_type(), "grad_out must have q's dtype ", q.scalar_type(),
                  ", got ", grad_out.scalar_type());
}

double default_scale(const at::Tensor& q, std::optional<double> scale) {
  return scale.has_value() ? *scale : 1.0 / std::sqrt(static_cast<double>(q.size(3)));
}

namespace {

// ---- the CPU kernels: plain ATen ops in float32, clarity over speed --------

// Each query head's kv head, repeated: [batch, kv_heads, ...] -> [batch, heads, ...] in float32.
at::Tensor per_query_head(const at::Tensor& kv, int64_t group) {
  return kv.to(at::kFloat).repeat_interleave(group, /*dim=*/1);  // kv head h/group for head h
}

// The inverse for gradients: each kv head receives the sum over its query heads.
at::Tensor sum_per_kv_head(const at::Tensor& grad, int64_t group) {
  const auto s = grad.sizes();
  return grad.reshape({s[0], s[1] / group, group, s[2], s[3]}).sum(/*dim=*/2);
}

// softmax(q k^T * scale + causal mask), float32 [batch, heads, seq_q, seq_kv].
at::Tensor attention_probabilities(const at::Tensor& q32, const at::Tensor& k32, double scale, bool is_causal) {
  at::Tensor scores = at::matmul(q32, k32.transpose(-2, -1)) * scale;
  if (is_causal) {
    // Top left, as PyTorch's is_causal: query i sees keys 0..i, whatever seq_q and seq_kv are.
    const at::Tensor visible = at::ones({q32.size(2), k32.size(2)}, q32.options().dtype(at::kBool)).tril();
    scores.masked_fill_(visible.logical_not(), -std::numeric_limits<float>::infinity());
  }
  return at::softmax(scores, -1);
}

at::Tensor attention_cpu(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, bool is_causal,
                         std::optional<double> scale) {
  check_attention_inputs(q, k, v);
  const int64_t group = q.size(1) / k.size(1);  // query heads per kv head
  const at::Tensor probs = attention_probabilities(q.to(at::kFloat), per_query_head(k, group),
                                                   default_scale(q, scale), is_causal);
  return at::matmul(probs, per_query_head(v, group)).to(q.scalar_type());
}

// With P = softmax(S), S = q k^T * scale, out = P v and dO = grad_out:
//   dv = P^T dO,   dP = dO v^T,   dS = P * (dP - rowsum(P * dP)),
//   dq = dS k * scale,   dk = dS^T q * scale;
// dk and dv are summed over the query heads that share a kv head.
std::tuple<at::Tensor, at::Tensor, at::Tensor> attention_backward_cpu(const at::Tensor& grad_out, const at::Tensor& q,
                                                                      const at::Tensor& k, const at::Tensor& v,
                                                                      bool is_causal, std::optional<double> scale) {
  check_attention_inputs(q, k, v);
  check_grad_out(grad_out, q);
  const int64_t group = q.size(1) / k.size(1);
  const double softmax_scale = default_scale(q, scale);
  const at::Tensor q32 = q.to(at::kFloat), k32 = per_query_head(k, group), v32 = per_query_head(v, group);
  const at::Tensor grad32 = grad_out.to(at::kFloat);

  const at::Tensor probs = attention_probabilities(q32, k32, softmax_scale, is_causal);  // recomputed
  const at::Tensor grad_v = at::matmul(probs.transpose(-2, -1), grad32);
  const at::Tensor grad_probs = at::matmul(grad32, v32.transpose(-2, -1));
  // The softmax's backward; masked keys have P = 0, so their dS is 0.
  const at::Tensor grad_scores = probs * (grad_probs - (probs * grad_probs).sum(-1, /*keepdim=*/true));
  const at::Tensor grad_q = at::matmul(grad_scores, k32) * softmax_scale;
  const at::Tensor grad_k = at::matmul(grad_scores.transpose(-2, -1), q32) * softmax_scale;
  return {grad_q.to(q.scalar_type()), sum_per_kv_head(grad_k, group).to(k.scalar_type()),
          sum_per_kv_head(grad_v, group).to(v.scalar_type())};
}

// ---- the Autograd kernel ---------------------------------------------------
//
// Autograd finds an op's derivative through the op's kernel for the Autograd
// dispatch key, which runs before the backend (CPU, CUDA) kernels. This one
// records a node whose backward calls attention_backward, then sends the call
// on to the backend kernel below it. Without it, autograd cannot differentiate
// the op (PyTorch's fallback for ops with no Autograd kernel gives no gradient).

using AttentionSignature = at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&, bool,
                                      std::optional<double>);
using AttentionBackwardSignature = std::tuple<at::Tensor, at::Tensor, at::Tensor>(
    const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&, bool, std::optional<double>);

// The backend kernel of attention (CPU or CUDA, by the inputs' device), below Autograd. A
// redispatch with the keys after Autograd, as PyTorch's own autograd kernels do: a new call
// (op.call) would enter the dispatcher again, and the profiler would count the op twice.
at::Tensor attention_below_autograd(c10::DispatchKeySet keys, const at::Tensor& q, const at::Tensor& k,
                                    const at::Tensor& v, bool is_causal, std::optional<double> scale) {
  static const auto op =
      c10::Dispatcher::singleton().findSchemaOrThrow("attnsweep_example::attention", "").typed<AttentionSignature>();
  // The ATen ops inside the CPU kernel must not be recorded for autograd either.
  const at::AutoDispatchBelowADInplaceOrView below_autograd;
  return op.redispatch(keys & c10::after_ADInplaceOrView_keyset, q, k, v, is_causal, scale);
}

class AttentionFunction : public torch::autograd::Function<AttentionFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, c10::DispatchKeySet keys, const at::Tensor& q,
                            const at::Tensor& k, const at::Tensor& v, bool is_causal, std::optional<double> scale) {
    ctx->save_for_backward({q, k, v});  // the inputs only: the backward recomputes the softmax
    ctx->saved_data["is_causal"] = is_causal;
    ctx->saved_data["scale"] = scale;
    return attention_below_autograd(keys, q, k, v, is_causal, scale);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad_outputs) {
    static const auto op = c10::Dispatcher::singleton()
                               .findSchemaOrThrow("attnsweep_example::attention_backward", "")
                               .typed<AttentionBackwardSignature>();
    const torch::autograd::variable_list saved = ctx->get_saved_variables();
    auto [grad_q, grad_k, grad_v] = op.call(grad_outputs[0], saved[0], saved[1], saved[2],
                                            ctx->saved_data["is_causal"].toBool(),
                                            ctx->saved_data["scale"].toOptional<double>());
    // One gradient per argument of forward: none for keys, is_causal and scale.
    return {at::Tensor(), grad_q, grad_k, grad_v, at::Tensor(), at::Tensor()};
  }
};

// The dispatcher passes the call's dispatch keys to a kernel whose first parameter takes them.
at::Tensor attention_autograd(c10::DispatchKeySet keys, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                              bool is_causal, std::optional<double> scale) {
  // Nothing to differentiate (grad mode off, as in attnsweep's timed forwards, or no
  // input requiring grad): straight to the backend kernel, no autograd node built.
  const bool differentiable =
      at::GradMode::is_enabled() && (q.requires_grad() || k.requires_grad() || v.requires_grad());
  if (!differentiable) return attention_below_autograd(keys, q, k, v, is_causal, scale);
  return AttentionFunction::apply(keys, q, k, v, is_causal, scale);
}

}  // namespace
}  // namespace attnsweep_example

TORCH_LIBRARY(attnsweep_example, m) {
  m.def("attention(Tensor q, Tensor k, Tensor v, bool is_causal=False, float? scale=None) -> Tensor");
  m.def(
      "attention_backward(Tensor grad_out, Tensor q, Tensor k, Tensor v, bool is_causal=False, float? scale=None) "
      "-> (Tensor, Tensor, Tensor)");
}

TORCH_LIBRARY_IMPL(attnsweep_example, CPU, m) {
  m.impl("attention", &attnsweep_example::attention_cpu);
  m.impl("attention_backward", &attnsweep_example::attention_backward_cpu);
}

TORCH_LIBRARY_IMPL(attnsweep_example, Autograd, m) { m.impl("attention", &attnsweep_example::attention_autograd); }
