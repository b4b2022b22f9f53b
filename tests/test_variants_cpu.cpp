// Every CPU variant against the float64 reference, on seeded random inputs.
#include <gtest/gtest.h>
#include <torch/csrc/autograd/grad_mode.h>

#include <ATen/ATen.h>

#include <cctype>
#include <tuple>

#include "runner/measure/inputs.hpp"
#include "runner/variants/naive_attention.hpp"
#include "runner/variants/registry.hpp"
#include "runner/variants/sdpa_common.hpp"
#include "runner/variants/variant_names.hpp"

namespace attnsweep {
namespace {

double relative_error(const at::Tensor& output, const at::Tensor& reference) {
  return ((output.to(at::kDouble) - reference).norm() / reference.norm()).item<double>();
}

struct VariantCase {
  std::string variant;
  Dtype dtype;
  Mask mask;
  Shape shape;
};

class CpuVariants : public ::testing::TestWithParam<VariantCase> {};

TEST_P(CpuVariants, MatchFloat64Reference) {
  const VariantCase& p = GetParam();
  const Case c{0, p.variant, p.shape, p.dtype, p.mask};
  const AttentionInputs inputs = make_inputs(c, Device::cpu(), 1234);
  const Variant* variant = find_variant(p.variant);
  ASSERT_NE(variant, nullptr);
  const Support support = variant->check(inputs);
  ASSERT_TRUE(support.supported) << support.reason;
  at::NoGradGuard no_grad;
  const at::Tensor output = variant->forward(inputs);
  EXPECT_EQ(output.sizes(), inputs.query.sizes());
  EXPECT_EQ(output.scalar_type(), inputs.query.scalar_type());
  const double error = relative_error(output, reference_attention(inputs));
  const double tolerance = p.dtype == Dtype::fp32 ? 1e-5 : 2e-2;
  EXPECT_LT(error, tolerance) << p.variant << " " << p.dtype;
  EXPECT_GT(error, 0.0) << "an exact match in low precision would mean the reference is not independent";
}

std::vector<VariantCase> cpu_cases() {
  std::vector<VariantCase> cases;
  for (const std::string variant : {"naive", "naive_inplace", "sdpa_math", "sdpa_flash", "sdpa_auto"}) {
    for (const Dtype dtype : {Dtype::fp32, Dtype::bf16}) {
      cases.push_back({variant, dtype, true, Shape{2, 4, 4, 64, 64, 32}});
      cases.push_back({variant, dtype, false, Shape{2, 4, 4, 64, 64, 32}});
    }
    cases.push_back({variant, Dtype::fp32, false, Shape{2, 8, 2, 1, 96, 32}});  // GQA decoding
    cases.push_back({variant, Dtype::fp32, true, Shape{1, 4, 2, 48, 80, 16}});  // GQA, Sq != Skv, causal top-left
  }
  // Serving masks (issue 25): on the CPU the naive variants, and SDPA's math, flash
  // and PyTorch's choice through a boolean attn_mask.
  const Mask bottom_right(CausalAlignment::bottom_right, std::nullopt, std::nullopt);
  const Mask sliding(CausalAlignment::bottom_right, 16, 0);
  const Mask local(CausalAlignment::none, 8, 4);
  for (const std::string variant : {"naive", "naive_inplace", "sdpa_math", "sdpa_flash", "sdpa_auto"}) {
    for (const Mask& mask : {bottom_right, sliding, local}) {
      cases.push_back({variant, Dtype::fp32, mask, Shape{1, 4, 2, 24, 80, 16}});  // chunked prefill, GQA
      cases.push_back({variant, Dtype::bf16, mask, Shape{2, 4, 4, 4, 64, 32}});   // decoding 4 queries
    }
  }
  return cases;
}

std::string test_name(const Mask& mask) {
  std::string name;
  for (const char ch : mask.label()) name += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(AllCpuVariants, CpuVariants, ::testing::ValuesIn(cpu_cases()),
                         [](const ::testing::TestParamInfo<VariantCase>& info) {
                           const auto& p = info.param;
                           return p.variant + "_" + to_string(p.dtype) + "_" + test_name(p.mask) + "_" + std::to_string(info.index);
                         });

TEST(Variants, RegistryImplementsEveryCatalogueEntry) {
  for (const auto& name : variant_names()) {
    const Variant* variant = find_variant(name);
    ASSERT_NE(variant, nullptr) << name;
    EXPECT_EQ(variant->name(), name);
  }
  EXPECT_EQ(find_variant("nope"), nullptr);
}

TEST(Variants, InputsAreSeededRandomNotZeros) {
  const Case c{0, "naive", Shape{1, 2, 2, 16, 16, 8}, Dtype::fp32, true};
  const AttentionInputs a = make_inputs(c, Device::cpu(), 5), b = make_inputs(c, Device::cpu(), 5), other = make_inputs(c, Device::cpu(), 6);
  EXPECT_TRUE(at::equal(a.query, b.query));
  EXPECT_FALSE(at::equal(a.query, other.query));
  EXPECT_FALSE(at::equal(a.query, a.key));
  EXPECT_NEAR(a.query.std().item<double>(), 1.0, 0.3);
  EXPECT_EQ(a.masked_out.sum().item<int64_t>(), 16 * 15 / 2);  // strictly above the diagonal
  EXPECT_TRUE(a.causal);               // PyTorch's is_causal says it: no attn_mask for SDPA
  EXPECT_FALSE(a.attend.defined());
}

// The masks as tensors, against PyTorch's own definitions: causal_lower_right's
// ones(Sq, Skv).tril(Skv - Sq) for the bottom right, and windows written out by hand.
TEST(Variants, ServingMasksAreTheKeysEachQuerySees) {
  const auto build = [](const Mask& mask, std::int64_t sq, std::int64_t skv) {
    return make_inputs(Case{0, "naive", Shape{1, 1, 1, sq, skv, 8}, Dtype::fp32, mask}, Device::cpu(), 1);
  };
  const auto seen = [](const AttentionInputs& inputs) { return inputs.masked_out.logical_not().to(at::kLong); };
  const AttentionInputs bottom_right = build(Mask(CausalAlignment::bottom_right, std::nullopt, std::nullopt), 3, 7);
  EXPECT_TRUE(at::equal(seen(bottom_right), at::ones({3, 7}, at::kLong).tril(7 - 3)));
  EXPECT_FALSE(bottom_right.causal);  // SDPA gets it as an attn_mask
  EXPECT_TRUE(at::equal(bottom_right.attend, bottom_right.masked_out.logical_not()));
  // On a square shape the bottom right is the top left: PyTorch's is_causal.
  const AttentionInputs square = build(Mask(CausalAlignment::bottom_right, std::nullopt, std::nullopt), 5, 5);
  EXPECT_TRUE(square.causal);
  EXPECT_FALSE(square.attend.defined());
  // Decoding 2 queries over 6 keys, causal bottom right, a window of 2 keys back.
  const AttentionInputs window = build(Mask(CausalAlignment::bottom_right, 2, 0), 2, 6);
  const at::Tensor expected_window = at::tensor({0, 0, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1}, at::kLong).view({2, 6});
  EXPECT_TRUE(at::equal(seen(window), expected_window)) << seen(window);
  // Two-sided local attention without causal: 1 key back, 2 ahead of the diagonal (bottom right).
  const AttentionInputs local = build(Mask(CausalAlignment::none, 1, 2), 4, 4);
  const at::Tensor expected_local =
      at::tensor({1, 1, 1, 0, 1, 1, 1, 1, 0, 1, 1, 1, 0, 0, 1, 1}, at::kLong).view({4, 4});
  EXPECT_TRUE(at::equal(seen(local), expected_local)) << seen(local);
  // Each row's count is what the FLOP count sums.
  for (const auto& [mask, sq, skv] : {std::tuple{Mask(CausalAlignment::bottom_right, 2, 0), 2, 6},
                                      std::tuple{Mask(CausalAlignment::none, 1, 2), 4, 4},
                                      std::tuple{Mask(CausalAlignment::top_left, 3, 0), 9, 5}}) {
    EXPECT_DOUBLE_EQ(build(mask, sq, skv).masked_out.logical_not().sum().item<double>(), mask.attended_pairs(sq, skv))
        << mask.label();
  }
}

// Flash's own bottom-right and window ops are CUDA's; on the CPU PyTorch's flash
// kernel takes the boolean attn_mask (the parameterised cases above run it).
TEST(Variants, FlashOnTheCpuTakesServingMasksAsAnAttnMask) {
  const Case c{0, "sdpa_flash", Shape{1, 2, 2, 4, 32, 16}, Dtype::fp32,
               Mask(CausalAlignment::bottom_right, 8, 0)};
  const AttentionInputs inputs = make_inputs(c, Device::cpu(), 3);
  const Support support = find_variant("sdpa_flash")->check(inputs);
  ASSERT_TRUE(support.supported) << support.reason;
  EXPECT_EQ(find_variant("sdpa_flash")->sdpa_backend(inputs), "flash_attention");
}

TEST(Variants, SdpaGuardPinsOneBackendAndRestoresTheFlags) {
  auto& context = at::globalContext();
  const bool flash = context.userEnabledFlashSDP(), math = context.userEnabledMathSDP();
  {
    SdpaBackendGuard guard(at::SDPBackend::math);
    EXPECT_TRUE(context.userEnabledMathSDP());
    EXPECT_FALSE(context.userEnabledFlashSDP());
    EXPECT_FALSE(context.userEnabledMemEfficientSDP());
    EXPECT_FALSE(context.userEnabledCuDNNSDP());
  }
  EXPECT_EQ(context.userEnabledFlashSDP(), flash);
  EXPECT_EQ(context.userEnabledMathSDP(), math);
}

TEST(Variants, SdpaBackendIsRecorded) {
  const Case c{0, "sdpa_auto", Shape{1, 2, 2, 16, 16, 8}, Dtype::fp32, true};
  const AttentionInputs inputs = make_inputs(c, Device::cpu(), 0);
  EXPECT_EQ(find_variant("sdpa_math")->sdpa_backend(inputs), "math");
  EXPECT_EQ(find_variant("sdpa_flash")->sdpa_backend(inputs), "flash_attention");
  EXPECT_EQ(find_variant("sdpa_auto")->sdpa_backend(inputs), "flash_attention");  // PyTorch's CPU choice
  EXPECT_EQ(find_variant("naive")->sdpa_backend(inputs), "");
}

}  // namespace
}  // namespace attnsweep
