// Every CPU variant against the float64 reference, on seeded random inputs.
#include <gtest/gtest.h>

#include <vector>
#include <torch/csrc/autograd/grad_mode.h>

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <ostream>
#include <tuple>

#include "runner/measure/input_guard.hpp"
#include "runner/measure/inputs.hpp"
#include "runner/variants/naive_attention.hpp"
#include "runner/variants/registry.hpp"
#include "runner/variants/sdpa_common.hpp"
#include "runner/variants/variant_names.hpp"
#include "tests/support/case_test_name.hpp"

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
  std::vector<std::int64_t> expected = inputs.query.sizes().vec();
  expected.back() = p.shape.value_dim();  // the output has the values' head dim
  EXPECT_EQ(output.sizes().vec(), expected);
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
  // A value head dim other than the query's (issue 36, MLA-like 32/16 and 16/48): the naive
  // variants, math, and PyTorch's choice (its CPU flash kernel takes equal dims only).
  for (const std::string variant : {"naive", "naive_inplace", "sdpa_math", "sdpa_auto"}) {
    for (const Dtype dtype : {Dtype::fp32, Dtype::bf16}) {
      cases.push_back({variant, dtype, true, Shape{2, 4, 4, 64, 64, 32, {}, {}, 0, 16}});
    }
    cases.push_back({variant, Dtype::fp32, false, Shape{1, 4, 2, 24, 80, 16, {}, {}, 0, 48}});  // GQA, Sq != Skv
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

Case as_case(const VariantCase& p) { return Case{0, p.variant, p.shape, p.dtype, p.mask}; }

// gtest prints a parameter it has no printer for as its bytes; this one is the case's label.
void PrintTo(const VariantCase& p, std::ostream* out) { attnsweep::testing::print_case(as_case(p), out); }

INSTANTIATE_TEST_SUITE_P(AllCpuVariants, CpuVariants, ::testing::ValuesIn(cpu_cases()),
                         [](const ::testing::TestParamInfo<VariantCase>& info) {
                           return attnsweep::testing::case_test_name(as_case(info.param));
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

// Issue 36: soft-capping, written out here on its own (float64, an explicit
// upper-triangle mask, grouped heads repeated): the naive variants and the float64
// reference compute cap * tanh(q k^T scale / cap) before the mask; a cap of 2
// changes the output far past the tolerance, so ignoring it would fail. Every
// SDPA variant refuses it, saying why.
TEST(Variants, SoftcapIsCapTimesTanhOfTheScaledScoresBeforeTheMask) {
  Case c{0, "naive", Shape{2, 4, 2, 40, 40, 16}, Dtype::fp32, true};
  c.scores.softcap = 2.0;
  const AttentionInputs inputs = make_inputs(c, Device::cpu(), 99);
  ASSERT_TRUE(inputs.scores.softcap.has_value());
  const at::Tensor q = inputs.query.to(at::kDouble);
  const at::Tensor k = inputs.key.to(at::kDouble).repeat_interleave(2, 1);
  const at::Tensor v = inputs.value.to(at::kDouble).repeat_interleave(2, 1);
  const at::Tensor raw = at::matmul(q, k.transpose(-2, -1)) / std::sqrt(16.0);
  const at::Tensor above = at::ones({40, 40}, at::kBool).triu(1);
  const auto attend = [&](const at::Tensor& scores) {
    return at::matmul(at::softmax(scores.masked_fill(above, -INFINITY), -1), v);
  };
  const at::Tensor expected = attend(2.0 * at::tanh(raw / 2.0));
  EXPECT_LT(relative_error(reference_attention(inputs), expected), 1e-12);
  EXPECT_GT(relative_error(attend(raw), expected), 0.1);  // the cap matters at 2
  at::NoGradGuard no_grad;
  for (const std::string name : {"naive", "naive_inplace"}) {
    const at::Tensor output = find_variant(name)->forward(inputs);
    EXPECT_LT(relative_error(output, expected), 1e-5) << name;
  }
  for (const std::string name : {"sdpa_math", "sdpa_flash", "sdpa_efficient", "sdpa_cudnn", "sdpa_auto"}) {
    const Support support = find_variant(name)->check(inputs);
    EXPECT_FALSE(support.supported) << name;
    EXPECT_EQ(support.reason.rfind("soft-capping: scaled_dot_product_attention takes a mask, a scale and is_causal", 0), 0u)
        << name << ": " << support.reason;
  }
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

namespace attnsweep {
namespace {

// Issue 25: a variable-length batch's inputs: the padded draw, its packed rows
// (sequence by sequence, FlashAttention's layout), cumulative lengths, and a
// mask per sequence; a paged cache holds the same keys, found through its table.
Case variable_length_case(std::int64_t page_size = 0) {
  Shape shape{3, 2, 1, 2, 6, 4};
  shape.seq_lens_q = {2, 1, 2};
  shape.seq_lens_kv = {6, 3, 4};
  shape.page_size = page_size;
  return Case{0, "naive", shape, Dtype::fp32, Mask(CausalAlignment::bottom_right, std::nullopt, std::nullopt)};
}

TEST(VariableLengths, PackedRowsAreEachSequencesRealRowsAndTheMaskIsPerSequence) {
  const AttentionInputs inputs = make_inputs(variable_length_case(), Device::cpu(), 11);
  ASSERT_TRUE(inputs.packed);
  const PackedBatch& packed = *inputs.packed;
  auto ints = [](const at::Tensor& t) {
    const at::Tensor on_host = t.to(at::kLong).contiguous();
    return std::vector<std::int64_t>(on_host.data_ptr<std::int64_t>(), on_host.data_ptr<std::int64_t>() + on_host.numel());
  };
  EXPECT_EQ(packed.cu_seqlens_q.scalar_type(), at::kInt);
  EXPECT_EQ(ints(packed.cu_seqlens_q), (std::vector<std::int64_t>{0, 2, 3, 5}));
  EXPECT_EQ(ints(packed.cu_seqlens_k), (std::vector<std::int64_t>{0, 6, 9, 13}));
  EXPECT_EQ(packed.query.sizes(), (std::vector<std::int64_t>{5, 2, 4}));
  EXPECT_EQ(packed.key.sizes(), (std::vector<std::int64_t>{13, 1, 4}));
  // Packed query row 2 is sequence 1's row 0; key row 7 is sequence 1's key 1.
  EXPECT_TRUE(at::equal(packed.query[2], inputs.query[1].select(1, 0)));
  EXPECT_TRUE(at::equal(packed.key[7], inputs.key[1].select(1, 1)));
  // Unpacking puts each row back and zeros the padding.
  const at::Tensor padded = packed.unpack(packed.query, 3, 2);
  EXPECT_TRUE(at::equal(padded[0], inputs.query[0]));
  EXPECT_TRUE(at::equal(padded[1].narrow(1, 0, 1), inputs.query[1].narrow(1, 0, 1)));
  EXPECT_EQ(padded[1].narrow(1, 1, 1).abs().sum().item<double>(), 0.0);
  // Sequence 1: 1 query over 3 keys, bottom right: keys 0..2; its padding row sees key 0 alone.
  const at::Tensor sees = inputs.masked_out.logical_not().to(at::kInt);
  EXPECT_EQ(sees.sizes(), (std::vector<std::int64_t>{3, 1, 2, 6}));
  auto row = [&](int b, int i) { return std::vector<int>(sees[b][0][i].data_ptr<int>(), sees[b][0][i].data_ptr<int>() + 6); };
  EXPECT_EQ(row(1, 0), (std::vector<int>{1, 1, 1, 0, 0, 0}));
  EXPECT_EQ(row(1, 1), (std::vector<int>{1, 0, 0, 0, 0, 0}));
  EXPECT_EQ(row(0, 0), (std::vector<int>{1, 1, 1, 1, 1, 0}));  // 2 queries over 6 keys
  EXPECT_EQ(row(2, 1), (std::vector<int>{1, 1, 1, 1, 0, 0}));  // 2 over 4: the last row sees all 4
  EXPECT_FALSE(inputs.causal);
}

TEST(VariableLengths, EachVariantOnTheCpuEqualsItsSequencesRunAlone) {
  const Case c = variable_length_case();
  const AttentionInputs inputs = make_inputs(c, Device::cpu(), 11);
  at::NoGradGuard no_grad;
  for (const char* name : {"naive", "naive_inplace", "sdpa_math", "sdpa_flash", "sdpa_auto"}) {
    const Variant* variant = find_variant(name);
    ASSERT_TRUE(variant->check(inputs).supported) << name;
    const at::Tensor output = variant->forward(inputs);
    for (std::int64_t b = 0; b < 3; ++b) {
      const std::int64_t lq = c.shape.seq_lens_q[b], lk = c.shape.seq_lens_kv[b];
      const at::Tensor q = inputs.query[b].unsqueeze(0).narrow(2, 0, lq);
      const at::Tensor k = inputs.key[b].unsqueeze(0).narrow(2, 0, lk).repeat_interleave(2, 1);
      const at::Tensor v = inputs.value[b].unsqueeze(0).narrow(2, 0, lk).repeat_interleave(2, 1);
      const at::Tensor alone = at::scaled_dot_product_attention(
          q, k, v, at::ones({lq, lk}, at::kBool).tril(lk - lq), 0.0, false, inputs.scale);
      EXPECT_LT(relative_error(output[b].unsqueeze(0).narrow(2, 0, lq), alone.to(at::kDouble)), 1e-6) << name << " " << b;
    }
  }
}

TEST(VariableLengths, APagedCacheHoldsTheSameKeysInShuffledPages) {
  const AttentionInputs inputs = make_inputs(variable_length_case(2), Device::cpu(), 11);
  ASSERT_TRUE(inputs.paged);
  const PagedCache& cache = *inputs.paged;
  // 3 + 2 + 2 pages of 2 keys; every page used once, in a shuffled order.
  EXPECT_EQ(cache.key.sizes(), (std::vector<std::int64_t>{7, 2, 1, 4}));
  EXPECT_EQ(cache.page_table.sizes(), (std::vector<std::int64_t>{3, 3}));
  const auto table = cache.page_table.to(at::kLong);
  std::vector<std::int64_t> used = {table[0][0].item<std::int64_t>(), table[0][1].item<std::int64_t>(),
                                    table[0][2].item<std::int64_t>(), table[1][0].item<std::int64_t>(),
                                    table[1][1].item<std::int64_t>(), table[2][0].item<std::int64_t>(),
                                    table[2][1].item<std::int64_t>()};
  std::vector<std::int64_t> sorted = used;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, (std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6}));
  EXPECT_NE(used, sorted);
  EXPECT_EQ(table[1][2].item<std::int64_t>(), 0);  // past sequence 1's two pages
  EXPECT_EQ(std::vector<std::int32_t>(cache.seqused_k.data_ptr<std::int32_t>(), cache.seqused_k.data_ptr<std::int32_t>() + 3),
            (std::vector<std::int32_t>{6, 3, 4}));
  // Through the table, the pages give back each sequence's keys and values.
  const at::Tensor keys = cache.gather(cache.key, 6);
  for (std::int64_t b = 0; b < 3; ++b) {
    const std::int64_t length = inputs.paged->seqused_k[b].item<std::int64_t>();
    EXPECT_TRUE(at::equal(keys[b].narrow(1, 0, length), inputs.key[b].narrow(1, 0, length))) << b;
    EXPECT_TRUE(at::equal(cache.gather(cache.value, 6)[b].narrow(1, 0, length), inputs.value[b].narrow(1, 0, length)));
  }
  EXPECT_FALSE(find_variant("sdpa_math")->check(inputs).supported);
}

// The guard over the shared inputs watches the packed rows and the pages too:
// flash's and the memory-efficient kernel's varlen routes read the packed rows
// directly, so a write there would reach every later variant of the shape.
TEST(VariableLengths, TheInputGuardSeesAWriteIntoThePackedRowsOrThePages) {
  const AttentionInputs inputs = make_inputs(variable_length_case(2), Device::cpu(), 11);
  const InputGuard guard(inputs);
  EXPECT_EQ(guard.changed(inputs), "");
  inputs.packed->key.select(0, 3).mul_(2);
  inputs.paged->value.select(0, 0).add_(1);
  EXPECT_EQ(guard.changed(inputs), "packed key, value pages");
}

}  // namespace
}  // namespace attnsweep
