// naive: matmul(q, k^T), scale, soft-cap and ALiBi's bias where the case has them,
// out-of-place masked_fill(-inf), softmax (with a sink column where the case has
// sinks, dropped after), matmul(v). An fp8 case's emulation dequantises q, k
// and v to bf16 first (inside the timed forward: the emulation's cost).
#include "runner/variants/naive_attention.hpp"

#include <ATen/ATen.h>

#include <limits>

#include "runner/variants/fp8_inputs.hpp"

namespace attnsweep {

at::Tensor naive_attention(const AttentionInputs& inputs, MaskMode mode) {
  if (inputs.quantized && at::isFloat8Type(inputs.query.scalar_type())) {
    return naive_attention(dequantized(inputs, at::kBFloat16), mode);
  }
  at::Tensor key = inputs.key, value = inputs.value;
  if (inputs.grouped) {
    // Grouped-query attention: each key/value head serves heads/kv_heads query heads.
    const auto repeats = inputs.query.size(1) / key.size(1);
    key = key.repeat_interleave(repeats, 1);
    value = value.repeat_interleave(repeats, 1);
  }
  at::Tensor scores = at::matmul(inputs.query, key.transpose(-2, -1));
  scores = scores * inputs.scale;
  if (inputs.scores.softcap) {
    // Gemma 2's soft-capping, on the scaled scores and before the mask (FlashAttention's order).
    const double cap = *inputs.scores.softcap;
    scores = at::tanh(scores / cap) * cap;
  }
  // ALiBi after the cap (FlashAttention's order: the bias is not capped); the
  // bias holds -inf where masked, and the masked_fill below still runs, as without it.
  if (inputs.alibi_bias.defined()) scores = scores + inputs.alibi_bias;
  if (inputs.masked_out.defined()) {
    const double minus_infinity = -std::numeric_limits<double>::infinity();
    if (mode == MaskMode::in_place) {
      scores.masked_fill_(inputs.masked_out, minus_infinity);
    } else {
      scores = scores.masked_fill(inputs.masked_out, minus_infinity);
    }
  }
  if (inputs.sinks.defined()) {
    // gpt-oss's reference: each head's sink logit as one more column of every
    // row's softmax, then dropped: it takes probability and gives no value.
    const auto s = scores.sizes();
    const at::Tensor sink_column = inputs.sinks.to(scores.scalar_type()).view({1, -1, 1, 1}).expand({s[0], s[1], s[2], 1});
    const at::Tensor probabilities = at::softmax(at::cat({scores, sink_column}, -1), -1);
    return at::matmul(probabilities.narrow(-1, 0, s[3]), value);
  }
  return at::matmul(at::softmax(scores, -1), value);
}

AttentionInputs in_float64(const AttentionInputs& inputs) {
  // fp8 values mean nothing without their descales: dequantised first (float32, then float64).
  if (inputs.quantized && at::isFloat8Type(inputs.query.scalar_type())) return in_float64(dequantized(inputs, at::kFloat));
  AttentionInputs upcast = inputs;
  upcast.query = inputs.query.to(at::kDouble);
  upcast.key = inputs.key.to(at::kDouble);
  upcast.value = inputs.value.to(at::kDouble);
  if (inputs.alibi_slopes.defined()) {
    const at::Tensor& distance = inputs.key_distance;
    const at::Tensor per_head = distance.dim() == 4 ? distance.to(at::kDouble) : distance.to(at::kDouble).unsqueeze(0).unsqueeze(0);
    // The masked pairs are masked_fill's (naive_attention): no -inf here.
    upcast.alibi_bias = -inputs.alibi_slopes.to(at::kDouble).view({1, -1, 1, 1}) * per_head;
  }
  return upcast;
}

at::Tensor reference_attention(const AttentionInputs& inputs) { return naive_attention(in_float64(inputs), MaskMode::in_place); }

namespace {
class Naive final : public Variant {
 public:
  std::string name() const override { return "naive"; }
  Support check(const AttentionInputs& inputs) const override { return builtin_layout_support(inputs); }
  at::Tensor forward(const AttentionInputs& inputs) const override {
    return naive_attention(inputs, MaskMode::out_of_place);
  }
};
}  // namespace

const Variant& naive_variant() {
  static const Naive instance;
  return instance;
}

}  // namespace attnsweep
