// Attention ops that misbehave in the ways a real op library can (hardening round
// three, issue 21): each is a reason attnsweep must not trust an op's output, its
// refusal or its inputs. Built as libattnsweep_misbehaving_ops.so and loaded by
// the tests as an op_library variant. Registered as CompositeExplicitAutograd (two
// of them, differentiable, otherwise: see below), so
// the same ops run on the CPU and on a GPU.
#include <ATen/ATen.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>
#include <torch/autograd.h>
#include <torch/library.h>

#include <cmath>
#include <limits>
#include <stdexcept>

namespace {

// Attention in float32, in the layout the op was given; `bshd` ops get (batch, seq, heads, head_dim).
at::Tensor attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, bool is_causal, bool bshd) {
  const at::Tensor query = (bshd ? q.transpose(1, 2) : q).to(at::kFloat);
  at::Tensor key = (bshd ? k.transpose(1, 2) : k).to(at::kFloat);
  at::Tensor value = (bshd ? v.transpose(1, 2) : v).to(at::kFloat);
  if (key.size(1) != query.size(1)) {  // grouped-query attention: each key/value head serves a group
    key = key.repeat_interleave(query.size(1) / key.size(1), 1);
    value = value.repeat_interleave(query.size(1) / value.size(1), 1);
  }
  at::Tensor scores = at::matmul(query, key.transpose(-2, -1)) / std::sqrt(static_cast<double>(q.size(-1)));
  if (is_causal) {
    const at::Tensor keep = at::ones({query.size(-2), key.size(-2)}, scores.options().dtype(at::kBool)).tril();
    scores = scores.masked_fill(keep.logical_not(), -std::numeric_limits<float>::infinity());
  }
  at::Tensor out = at::matmul(at::softmax(scores, -1), value).to(q.scalar_type());
  return bshd ? out.transpose(1, 2).contiguous() : out;
}

// Right, in the (batch, seq, heads, head_dim) layout FlashAttention's ops take.
at::Tensor good_bshd(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, bool is_causal) {
  return attention(q, k, v, is_causal, true);
}
// Right in bf16; refuses fp16 and fp32 by throwing a plain std::runtime_error, as
// the FlashAttention-3 wheel does through the torch stable ABI.
at::Tensor bf16_only_bshd(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, bool is_causal) {
  if (q.scalar_type() != at::kBFloat16) {
    throw std::runtime_error("This flash attention build does not support FP16 or FP32 (test op)");
  }
  return attention(q, k, v, is_causal, true);
}
at::Tensor nans(const at::Tensor& q, const at::Tensor&, const at::Tensor&, bool) { return at::full_like(q, NAN); }
at::Tensor wrong_shape(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, bool is_causal) {
  return attention(q, k, v, is_causal, false).narrow(-1, 0, 1).contiguous();
}
at::Tensor wrong_dtype(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, bool is_causal) {
  return attention(q, k, v, is_causal, false).to(at::kDouble);
}
at::Tensor int_out(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, bool is_causal) {
  return attention(q, k, v, is_causal, false).mul(1000).to(at::kLong);
}
at::Tensor undefined(const at::Tensor&, const at::Tensor&, const at::Tensor&, bool) { return at::Tensor(); }
// Right output, but it writes into the inputs every later variant of the case shares.
at::Tensor mutates(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, bool is_causal) {
  at::Tensor out = attention(q, k, v, is_causal, false);
  const_cast<at::Tensor&>(v).mul_(2);
  const_cast<at::Tensor&>(q).add_(1);
  return out;
}
at::Tensor throws_int(const at::Tensor&, const at::Tensor&, const at::Tensor&, bool) { throw 42; }

// Issue 24's validity checks. Right output, but on a GPU the work runs on a side
// stream the caller's stream does not wait for; the host waits for it instead.
// CUDA events on the caller's stream then time almost nothing while the
// profiler sees every kernel: the event median and the kernel time disagree.
at::Tensor side_stream(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, bool is_causal) {
  if (!q.is_cuda()) return attention(q, k, v, is_causal, true);
  const c10::cuda::CUDAStream side = c10::cuda::getStreamFromPool();
  at::Tensor out;
  {
    const c10::cuda::CUDAStreamGuard on_side(side);
    out = attention(q, k, v, is_causal, true);
  }
  side.synchronize();
  return out;
}
// Right eagerly; while its stream captures a CUDA graph it launches nothing and
// hands back unwritten memory (the kernels silently missing from a graph that
// flashinfer-bench found): replays then time nothing and leave the output stale.
at::Tensor skips_under_capture(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, bool is_causal) {
  if (q.is_cuda()) {
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(c10::cuda::getCurrentCUDAStream().stream(), &status) == cudaSuccess &&
        status != cudaStreamCaptureStatusNone) {
      return at::empty_like(q);
    }
  }
  return attention(q, k, v, is_causal, true);
}

// Differentiable without a backward of its own: registered CompositeImplicitAutograd,
// so autograd differentiates its ATen ops. In the bshd layout, so attnsweep's
// laid-out copies sit on the path back to q, k and v.
at::Tensor good_bshd_differentiable(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, bool is_causal) {
  return attention(q, k, v, is_causal, true);
}

// A right forward with a wrong backward: dq comes out 1.5 times too large, dk and
// dv are right. The backward's numerics must say so (issue 23).
class WrongBackward : public torch::autograd::Function<WrongBackward> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& q, const at::Tensor& k,
                            const at::Tensor& v, bool is_causal) {
    ctx->save_for_backward({q, k, v});
    ctx->saved_data["is_causal"] = is_causal;
    return attention(q, k, v, is_causal, false);
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad_outputs) {
    const auto saved = ctx->get_saved_variables();
    const at::AutoGradMode grad_on(true);
    const at::Tensor q = saved[0].detach().requires_grad_(true), k = saved[1].detach().requires_grad_(true),
                     v = saved[2].detach().requires_grad_(true);
    const at::Tensor out = attention(q, k, v, ctx->saved_data["is_causal"].toBool(), false);
    const auto grads = torch::autograd::grad({out}, {q, k, v}, {grad_outputs[0]});
    return {grads[0] * 1.5, grads[1], grads[2], at::Tensor()};
  }
};
at::Tensor wrong_backward(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, bool is_causal) {
  return attention(q, k, v, is_causal, false);
}
at::Tensor wrong_backward_autograd(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, bool is_causal) {
  return WrongBackward::apply(q, k, v, is_causal);
}

}  // namespace

TORCH_LIBRARY(attnsweep_misbehaving, m) {
  m.def("good_bshd(Tensor q, Tensor k, Tensor v, bool is_causal=False) -> Tensor");
  m.def("bf16_only_bshd(Tensor q, Tensor k, Tensor v, bool is_causal=False) -> Tensor");
  m.def("nans(Tensor q, Tensor k, Tensor v, bool is_causal=False) -> Tensor");
  m.def("wrong_shape(Tensor q, Tensor k, Tensor v, bool is_causal=False) -> Tensor");
  m.def("wrong_dtype(Tensor q, Tensor k, Tensor v, bool is_causal=False) -> Tensor");
  m.def("int_out(Tensor q, Tensor k, Tensor v, bool is_causal=False) -> Tensor");
  m.def("undefined(Tensor q, Tensor k, Tensor v, bool is_causal=False) -> Tensor");
  m.def("mutates(Tensor q, Tensor k, Tensor v, bool is_causal=False) -> Tensor");
  m.def("throws_int(Tensor q, Tensor k, Tensor v, bool is_causal=False) -> Tensor");
  m.def("good_bshd_differentiable(Tensor q, Tensor k, Tensor v, bool is_causal=False) -> Tensor");
  m.def("wrong_backward(Tensor q, Tensor k, Tensor v, bool is_causal=False) -> Tensor");
  m.def("implicit_beside_explicit(Tensor q, Tensor k, Tensor v, bool is_causal=False) -> Tensor");
  m.def("side_stream(Tensor q, Tensor k, Tensor v, bool is_causal=False) -> Tensor");
  m.def("skips_under_capture(Tensor q, Tensor k, Tensor v, bool is_causal=False) -> Tensor");
}

TORCH_LIBRARY_IMPL(attnsweep_misbehaving, CompositeExplicitAutograd, m) {
  m.impl("good_bshd", good_bshd);
  m.impl("bf16_only_bshd", bf16_only_bshd);
  m.impl("nans", nans);
  m.impl("wrong_shape", wrong_shape);
  m.impl("wrong_dtype", wrong_dtype);
  m.impl("int_out", int_out);
  m.impl("undefined", undefined);
  m.impl("mutates", mutates);
  m.impl("throws_int", throws_int);
  m.impl("wrong_backward", wrong_backward);
  m.impl("side_stream", side_stream);
  m.impl("skips_under_capture", skips_under_capture);
  // Beside a CompositeImplicitAutograd kernel of the same op (below): the dispatcher
  // then runs this one, and autograd meets PyTorch's fallback, not the composite.
  m.impl("implicit_beside_explicit", good_bshd_differentiable);
}

TORCH_LIBRARY_IMPL(attnsweep_misbehaving, CompositeImplicitAutograd, m) {
  m.impl("good_bshd_differentiable", good_bshd_differentiable);
  m.impl("implicit_beside_explicit", good_bshd_differentiable);
}

TORCH_LIBRARY_IMPL(attnsweep_misbehaving, Autograd, m) { m.impl("wrong_backward", wrong_backward_autograd); }
