// naive: matmul(q, k^T), scale, soft-cap where the case has one, out-of-place masked_fill(-inf), softmax, matmul(v).
#include "runner/variants/naive_attention.hpp"

#include <ATen/ATen.h>

#include <limits>

namespace attnsweep {

at::Tensor naive_attention(const AttentionInputs& inputs, MaskMode mode) {
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
  if (inputs.masked_out.defined()) {
    const double minus_infinity = -std::numeric_limits<double>::infinity();
    if (mode == MaskMode::in_place) {
      scores.masked_fill_(inputs.masked_out, minus_infinity);
    } else {
      scores = scores.masked_fill(inputs.masked_out, minus_infinity);
    }
  }
  return at::matmul(at::softmax(scores, -1), value);
}

at::Tensor reference_attention(const AttentionInputs& inputs) {
  AttentionInputs upcast = inputs;
  upcast.query = inputs.query.to(at::kDouble);
  upcast.key = inputs.key.to(at::kDouble);
  upcast.value = inputs.value.to(at::kDouble);
  return naive_attention(upcast, MaskMode::in_place);
}

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
