// Every CPU variant against the float64 reference, on seeded random inputs.
#include <gtest/gtest.h>
#include <torch/csrc/autograd/grad_mode.h>

#include <ATen/ATen.h>

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
  bool causal;
  Shape shape;
};

class CpuVariants : public ::testing::TestWithParam<VariantCase> {};

TEST_P(CpuVariants, MatchFloat64Reference) {
  const VariantCase& p = GetParam();
  const Case c{0, p.variant, p.shape, p.dtype, p.causal};
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
  return cases;
}

INSTANTIATE_TEST_SUITE_P(AllCpuVariants, CpuVariants, ::testing::ValuesIn(cpu_cases()),
                         [](const ::testing::TestParamInfo<VariantCase>& info) {
                           const auto& p = info.param;
                           return p.variant + "_" + to_string(p.dtype) + (p.causal ? "_causal_" : "_full_") + std::to_string(info.index);
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
  EXPECT_EQ(a.causal_mask.sum().item<int64_t>(), 16 * 15 / 2);  // strictly above the diagonal
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
