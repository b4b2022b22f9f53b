#include "runner/variants/sdpa_common.hpp"

#include <ATen/Context.h>
#include <ATen/native/transformers/cuda/sdp_utils.h>
#include <ATen/ops/_efficient_attention_forward.h>
#include <ATen/ops/_flash_attention_forward.h>
#include <ATen/ops/_fused_sdp_choice.h>
#include <ATen/ops/_scaled_dot_product_flash_attention.h>
#include <ATen/ops/scaled_dot_product_attention.h>
#include <c10/util/Exception.h>
#include <torch/csrc/autograd/function.h>

#include <set>
#include <utility>
#include <vector>

#include "runner/common/text.hpp"

namespace attnsweep {
namespace {

// Collects TORCH_WARN messages: PyTorch explains a rejected backend only there.
class WarningCollector final : public c10::WarningHandler {
 public:
  void process(const c10::Warning& warning) override { messages.push_back(warning.msg()); }
  std::string joined() const {
    std::string out;
    for (const auto& message : messages) {
      if (out.find(message) != std::string::npos) continue;
      if (!out.empty()) out += " | ";
      out += message;
    }
    return out;
  }
  std::vector<std::string> messages;
};

// ALiBi's bias is SDPA's float attn_mask (the mask inside it as -inf): is_causal
// cannot go with an attn_mask, so a causal case with ALiBi passes the bias alone.
std::optional<at::Tensor> attn_mask_of(const AttentionInputs& inputs) {
  if (inputs.alibi_bias.defined()) return inputs.alibi_bias;
  if (inputs.attend.defined()) return inputs.attend;
  return std::nullopt;
}

bool is_causal_of(const AttentionInputs& inputs) { return inputs.causal && !inputs.alibi_bias.defined(); }

sdp::sdp_params params_of(const AttentionInputs& inputs) {
  return sdp::sdp_params{inputs.query, inputs.key, inputs.value, attn_mask_of(inputs), 0.0, is_causal_of(inputs), inputs.grouped};
}

// How a variant runs a mask that PyTorch's is_causal flag does not describe
// (docs/measurement.md, "Masks"): the way PyTorch's own
// torch.nn.attention.bias.causal_lower_right dispatches it (flash's causal flag,
// which FlashAttention aligns to the bottom right; the memory-efficient kernel's
// bottom-right mask type), FlashAttention's own op with its window sizes (and
// its alibi_slopes: ALiBi goes there on the flash backend, where PyTorch's build
// says whether it has it), or else SDPA with the mask as a boolean attn_mask
// (with ALiBi: the float bias holding the mask).
// A variable-length batch goes to the two kernels' own variable-length entry
// points (packed rows and cumulative lengths, as FlashAttention's varlen API);
// every other SDPA variant runs the padded batch with its mask.
enum class MaskRoute { sdpa, flash_bottom_right, flash_op, efficient_bottom_right, flash_varlen, efficient_varlen };

MaskRoute route_of(const AttentionInputs& inputs, std::optional<at::SDPBackend> pinned) {
  if (inputs.packed) {
    if (!pinned || !inputs.query.is_cuda()) return MaskRoute::sdpa;
    if (*pinned == at::SDPBackend::flash_attention) return MaskRoute::flash_varlen;
    if (*pinned == at::SDPBackend::efficient_attention) return MaskRoute::efficient_varlen;
    return MaskRoute::sdpa;
  }
  // On the CPU, PyTorch's flash kernel takes a boolean attn_mask itself.
  if (!pinned || !inputs.query.is_cuda()) return MaskRoute::sdpa;
  if (inputs.alibi_slopes.defined()) {
    return *pinned == at::SDPBackend::flash_attention ? MaskRoute::flash_op : MaskRoute::sdpa;
  }
  if (!inputs.mask.any() || inputs.causal) return MaskRoute::sdpa;
  if (*pinned == at::SDPBackend::flash_attention) {
    return inputs.mask.windowed() ? MaskRoute::flash_op : MaskRoute::flash_bottom_right;
  }
  if (*pinned == at::SDPBackend::efficient_attention && !inputs.mask.windowed() &&
      inputs.mask.causal == CausalAlignment::bottom_right) {
    return MaskRoute::efficient_bottom_right;
  }
  return MaskRoute::sdpa;
}

at::Tensor bshd(const at::Tensor& tensor) { return tensor.transpose(1, 2); }

// Whether autograd will ask these tensors' gradient: the memory-efficient
// kernel computes the log-sum-exp its backward needs only when told.
bool needs_grad(const at::Tensor& query, const at::Tensor& key, const at::Tensor& value) {
  return at::GradMode::is_enabled() && (query.requires_grad() || key.requires_grad() || value.requires_grad());
}

// FlashAttention's window sizes: -1 is no bound; its causal flag bounds the right at 0.
std::int64_t flash_window_left(const Mask& mask) { return mask.window_left.value_or(-1); }
std::int64_t flash_window_right(const Mask& mask) { return mask.is_causal() ? 0 : mask.window_right.value_or(-1); }
// FlashAttention's alibi_slopes (float32, one per query head), or none.
std::optional<at::Tensor> flash_alibi_slopes(const AttentionInputs& inputs) {
  if (inputs.alibi_slopes.defined()) return inputs.alibi_slopes;
  return std::nullopt;
}

at::Tensor run_route(MaskRoute route, const AttentionInputs& inputs) {
  const Mask& mask = inputs.mask;
  switch (route) {
    case MaskRoute::flash_bottom_right:
      return std::get<0>(at::_scaled_dot_product_flash_attention(inputs.query, inputs.key, inputs.value, 0.0,
                                                                 /*is_causal=*/true, /*return_debug_mask=*/false,
                                                                 inputs.scale));
    case MaskRoute::flash_op: {
      const auto output = std::get<0>(at::_flash_attention_forward(
          bshd(inputs.query), bshd(inputs.key), bshd(inputs.value), std::nullopt, std::nullopt, inputs.query.size(2),
          inputs.key.size(2), 0.0, mask.is_causal(), /*return_debug_mask=*/false, inputs.scale,
          flash_window_left(mask), flash_window_right(mask), /*seqused_k=*/std::nullopt, flash_alibi_slopes(inputs)));
      return bshd(output);
    }
    case MaskRoute::flash_varlen: {
      // (total_q, heads, head_dim) out; FlashAttention aligns causal to each sequence's bottom right.
      const PackedBatch& packed = *inputs.packed;
      return std::get<0>(at::_flash_attention_forward(
          packed.query, packed.key, packed.value, packed.cu_seqlens_q, packed.cu_seqlens_k, packed.max_q,
          packed.max_kv, 0.0, mask.is_causal(), /*return_debug_mask=*/false, inputs.scale, flash_window_left(mask),
          flash_window_right(mask), /*seqused_k=*/std::nullopt, flash_alibi_slopes(inputs)));
    }
    case MaskRoute::efficient_varlen: {
      // The kernel's batch of one holding every sequence's rows: (1, total, heads, head_dim).
      // Its backward needs the log-sum-exp: computed where a gradient will be asked.
      const PackedBatch& packed = *inputs.packed;
      const std::int64_t mask_type = !mask.is_causal() ? 0 : mask.causal == CausalAlignment::top_left ? 1 : 2;
      return std::get<0>(at::_efficient_attention_forward(
                             packed.query.unsqueeze(0), packed.key.unsqueeze(0), packed.value.unsqueeze(0),
                             std::nullopt, packed.cu_seqlens_q, packed.cu_seqlens_k, packed.max_q, packed.max_kv, 0.0,
                             mask_type, /*compute_log_sumexp=*/needs_grad(packed.query, packed.key, packed.value),
                             inputs.scale))
          .select(0, 0);
    }
    case MaskRoute::efficient_bottom_right: {
      // sdp::CustomMaskType::CausalFromBottomRight. Grouped inputs never get here:
      // PyTorch's checks refuse them for this kernel (same heads required).
      constexpr std::int64_t kBottomRight = 2;
      const auto output = std::get<0>(at::_efficient_attention_forward(
          bshd(inputs.query), bshd(inputs.key), bshd(inputs.value),
          std::nullopt, std::nullopt, std::nullopt, std::nullopt, std::nullopt, 0.0, kBottomRight,
          /*compute_log_sumexp=*/needs_grad(inputs.query, inputs.key, inputs.value), inputs.scale));
      return bshd(output);
    }
    case MaskRoute::sdpa: break;
  }
  return call_sdpa(inputs);
}

// PyTorch's own checker for one CUDA backend, with its reasons (debug = true).
std::string cuda_backend_reason(const AttentionInputs& inputs, at::SDPBackend backend) {
  WarningCollector collector;
  c10::WarningUtils::WarningHandlerGuard handler_guard(&collector);
  c10::WarningUtils::WarnAlways warn_always(true);
  const auto params = params_of(inputs);
  bool ok = true;
  switch (backend) {
    case at::SDPBackend::flash_attention: ok = sdp::can_use_flash_attention(params, true); break;
    case at::SDPBackend::efficient_attention: ok = sdp::can_use_mem_efficient_attention(params, true); break;
    case at::SDPBackend::cudnn_attention: ok = sdp::can_use_cudnn_attention(params, true); break;
    default: break;
  }
  return ok ? "" : collector.joined();
}

}  // namespace

std::string sdpa_backend_name(at::SDPBackend backend) {
  switch (backend) {
    case at::SDPBackend::math: return "math";
    case at::SDPBackend::flash_attention: return "flash_attention";
    case at::SDPBackend::efficient_attention: return "efficient_attention";
    case at::SDPBackend::cudnn_attention: return "cudnn_attention";
    case at::SDPBackend::overrideable: return "overrideable";
    default: return "error";
  }
}

SdpaBackendGuard::SdpaBackendGuard(std::optional<at::SDPBackend> only) {
  auto& context = at::globalContext();
  flash_ = context.userEnabledFlashSDP();
  fa3_ = context.userEnabledFA3SDP();
  efficient_ = context.userEnabledMemEfficientSDP();
  math_ = context.userEnabledMathSDP();
  cudnn_ = context.userEnabledCuDNNSDP();
  overrideable_ = context.userEnabledOverrideableSDP();
  if (!only) return;
  context.setSDPUseFlash(*only == at::SDPBackend::flash_attention);
  context.setSDPUseFA3(false);
  context.setSDPUseMemEfficient(*only == at::SDPBackend::efficient_attention);
  context.setSDPUseMath(*only == at::SDPBackend::math);
  context.setSDPUseCuDNN(*only == at::SDPBackend::cudnn_attention);
  context.setSDPUseOverrideable(false);
}

SdpaBackendGuard::~SdpaBackendGuard() {
  auto& context = at::globalContext();
  context.setSDPUseFlash(flash_);
  context.setSDPUseFA3(fa3_);
  context.setSDPUseMemEfficient(efficient_);
  context.setSDPUseMath(math_);
  context.setSDPUseCuDNN(cudnn_);
  context.setSDPUseOverrideable(overrideable_);
}

at::Tensor call_sdpa(const AttentionInputs& inputs) {
  return at::scaled_dot_product_attention(inputs.query, inputs.key, inputs.value, attn_mask_of(inputs),
                                          /*dropout_p=*/0.0, is_causal_of(inputs), /*scale=*/inputs.scale,
                                          /*enable_gqa=*/inputs.grouped);
}

BackendChoice choose_sdpa_backend(const AttentionInputs& inputs) {
  WarningCollector collector;
  c10::WarningUtils::WarningHandlerGuard handler_guard(&collector);
  c10::WarningUtils::WarnAlways warn_always(true);
  BackendChoice choice;
  try {
    const auto raw = at::_fused_sdp_choice(inputs.query, inputs.key, inputs.value, attn_mask_of(inputs), 0.0, is_causal_of(inputs),
                                           inputs.scale, inputs.grouped);
    const auto backend = static_cast<at::SDPBackend>(raw);
    if (backend != at::SDPBackend::error) choice.backend = backend;
  } catch (const c10::Error& error) {
    collector.messages.push_back(error.msg());
  }
  choice.reason = collector.joined();
  return choice;
}

std::string sdpa_backward_backend_of(const at::Tensor& output) {
  const auto root = output.grad_fn();
  if (!root) return "";
  // The node names of PyTorch's derivatives.yaml for the fused SDPA ops (CPU
  // flash included: ScaledDotProductFlashAttentionForCpuBackward0).
  // The bottom-right and window routes call the kernels' own ops, whose nodes
  // are FlashAttentionBackward0 and EfficientAttentionBackward0.
  static const std::pair<const char*, const char*> kFused[] = {
      {"FlashAttention", "flash_attention"},
      {"EfficientAttention", "efficient_attention"},
      {"CudnnAttention", "cudnn_attention"},
      {"ScaledDotProductFusedAttentionOverrideable", "overrideable"},
  };
  // The whole graph back to the leaves (a few nodes for the fused backends, a
  // few dozen for math's decomposition): a fused node under extra views is found
  // wherever it sits, and only a graph without one is math's.
  std::vector<torch::autograd::Node*> stack{root.get()};
  std::set<torch::autograd::Node*> seen{root.get()};
  while (!stack.empty()) {
    torch::autograd::Node* node = stack.back();
    stack.pop_back();
    const std::string name = node->name();
    for (const auto& [fragment, backend] : kFused) {
      if (name.find(fragment) != std::string::npos) return backend;
    }
    for (const auto& edge : node->next_edges()) {
      if (edge.function && seen.insert(edge.function.get()).second) stack.push_back(edge.function.get());
    }
  }
  return sdpa_backend_name(at::SDPBackend::math);
}

Support SdpaVariant::check(const AttentionInputs& inputs) const {
  if (Support layout = builtin_layout_support(inputs); !layout.supported) return layout;
  if (inputs.scores.softcap) {
    return {false, "soft-capping: scaled_dot_product_attention takes a mask, a scale and is_causal but no function "
                   "of the scores (PyTorch has soft-capping in FlexAttention's score_mod, not in SDPA's backends); "
                   "naive and naive_inplace compute it, an op library through its softcap argument"};
  }
  if (inputs.quantized) {
    std::string reason =
        "fp8 inputs: scaled_dot_product_attention takes no fp8 tensors and no descales (its backends run fp16, bf16 "
        "and fp32; PyTorch's fp8 matmul, torch._scaled_mm, is not one of them); naive and naive_inplace emulate fp8 "
        "(dequantise, then bf16), an op library that takes fp8 runs it through its descale arguments";
    if (pinned_ && *pinned_ != at::SDPBackend::math && inputs.query.is_cuda()) {
      const std::string detail = cuda_backend_reason(inputs, *pinned_);
      if (!detail.empty()) reason += " (PyTorch's check: " + detail + ")";
    }
    return {false, reason};
  }
  if (inputs.sinks.defined()) {
    return {false, "attention sinks: scaled_dot_product_attention's softmax has no per-head sink logit (none of its "
                   "backends takes one); naive and naive_inplace compute it, an op library through its sinks argument"};
  }
  const MaskRoute route = route_of(inputs, pinned_);
  if (route == MaskRoute::sdpa) return check_sdpa(inputs);
  // The kernel's own op: PyTorch's checks of an unmasked call say whether the
  // kernel runs these tensors at all; the mask is then the op's own argument.
  AttentionInputs unmasked = inputs;
  unmasked.causal = false;
  unmasked.attend = at::Tensor();
  unmasked.alibi_bias = at::Tensor();
  if (Support base = check_sdpa(unmasked); !base.supported) return base;
  if (route == MaskRoute::efficient_varlen && inputs.alibi_slopes.defined()) {
    return {false, "ALiBi on a variable-length batch: the memory-efficient kernel's variable-length entry point takes "
                   "no additive bias in PyTorch's C++ API (the padded batch with the bias is sdpa_math's or sdpa_cudnn's)"};
  }
  if (route == MaskRoute::flash_varlen && inputs.mask.causal == CausalAlignment::top_left &&
      inputs.packed->q_lens != inputs.packed->kv_lens) {
    return {false, "FlashAttention aligns causal masks to each sequence's bottom right; a top-left causal mask "
                   "differs from that where a sequence has seq_len_q != seq_len_kv (use causal: bottom_right)"};
  }
  if (route == MaskRoute::efficient_varlen && inputs.grouped) {
    return {false, "the memory-efficient kernel's variable-length entry point needs as many key/value heads as "
                   "query heads (grouped-query attention is not supported there)"};
  }
  if (route == MaskRoute::efficient_varlen && inputs.mask.windowed()) {
    return {false, "the memory-efficient kernel's variable-length entry point has no sliding window in PyTorch's "
                   "C++ API"};
  }
  if (route == MaskRoute::flash_op && inputs.mask.causal == CausalAlignment::top_left &&
      inputs.query.size(2) != inputs.key.size(2)) {
    return {false, "FlashAttention aligns causal masks, windows and ALiBi's distances to the bottom right; a top-left "
                   "causal mask differs from that when seq_len_q != seq_len_kv (use causal: bottom_right)"};
  }
  if (inputs.alibi_slopes.defined()) {
    // Whether PyTorch's build of the kernel has ALiBi shows only when it is called
    // (torch 2.11's says "This flash attention build does not support alibi."):
    // one call, and its own words where it refuses.
    try {
      SdpaBackendGuard guard(pinned_);
      (void)run_route(route, inputs);
    } catch (const c10::OutOfMemoryError&) {
      throw;  // the case's memory, not the kernel's refusal: the case runner stores oom
    } catch (const c10::Error& error) {
      const std::string message = text::first_line(error.what_without_backtrace());
      // Only the build's refusal of ALiBi is a refusal; any other failure is the case's error.
      if (message.find("alibi") == std::string::npos) throw;
      return {false, "ALiBi (alibi_slopes) on FlashAttention: " + message};
    }
  }
  return {};
}

Support SdpaVariant::check_sdpa(const AttentionInputs& inputs) const {
  SdpaBackendGuard guard(pinned_);
  const BackendChoice choice = choose_sdpa_backend(inputs);
  if (choice.backend && (!pinned_ || *choice.backend == *pinned_)) return {};
  std::string reason = choice.reason;
  if (pinned_ && inputs.query.is_cuda()) {
    const std::string detail = cuda_backend_reason(inputs, *pinned_);
    if (!detail.empty()) reason = detail;
  }
  if (reason.empty()) reason = "PyTorch found no SDPA backend for these inputs";
  return {false, reason};
}

at::Tensor SdpaVariant::forward(const AttentionInputs& inputs) const {
  SdpaBackendGuard guard(pinned_);
  return run_route(route_of(inputs, pinned_), inputs);
}

std::string SdpaVariant::sdpa_backend(const AttentionInputs& inputs) const {
  if (pinned_) return sdpa_backend_name(*pinned_);
  const BackendChoice choice = choose_sdpa_backend(inputs);
  return choice.backend ? sdpa_backend_name(*choice.backend) : "";
}

}  // namespace attnsweep
