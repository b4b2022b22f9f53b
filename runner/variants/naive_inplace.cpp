// naive_inplace: as naive, with masked_fill_ (the study's 04_b).
#include "runner/variants/naive_attention.hpp"

namespace attnsweep {
namespace {
class NaiveInplace final : public Variant {
 public:
  std::string name() const override { return "naive_inplace"; }
  Support check(const AttentionInputs& inputs) const override { return builtin_layout_support(inputs); }
  at::Tensor forward(const AttentionInputs& inputs) const override {
    return naive_attention(inputs, MaskMode::in_place);
  }
};
}  // namespace

const Variant& naive_inplace_variant() {
  static const NaiveInplace instance;
  return instance;
}

}  // namespace attnsweep
