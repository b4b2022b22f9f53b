// Issue 36: ALiBi and attention sinks on the CPU. Each is written out here on
// its own in float64 (ALiBi's -slope_h * |i + offset - j| from the paper's
// slopes; a sink as one more softmax column that gives no value), and the naive
// variants, SDPA's (ALiBi as its float attn_mask) and the float64 references
// (chunked by heads and rows, forward and gradients) must equal it.
#include <gtest/gtest.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/grad_mode.h>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <string>
#include <stdexcept>
#include <vector>

#include "runner/common/score_mod.hpp"
#include "runner/measure/accuracy.hpp"
#include "runner/measure/gradient_check.hpp"
#include "runner/measure/input_guard.hpp"
#include "runner/measure/inputs.hpp"
#include "runner/variants/naive_attention.hpp"
#include "runner/variants/registry.hpp"

namespace attnsweep {
namespace {

double relative_error(const at::Tensor& output, const at::Tensor& reference) {
  return ((output.to(at::kDouble) - reference.to(at::kDouble)).norm() / reference.to(at::kDouble).norm()).item<double>();
}

// 2 sequences, 8 query heads over 2 key/value heads, 24 queries over 40 keys.
Case score_mod_case(const Mask& mask, bool alibi, bool sinks) {
  Case c{0, "naive", Shape{2, 8, 2, 24, 40, 16}, Dtype::fp32, mask};
  c.scores.alibi = alibi;
  c.scores.sinks = sinks;
  return c;
}

// The case's attention written out in float64: scores, ALiBi's bias from the
// slopes and the mask's diagonal, the mask, the sinks, the values.
at::Tensor written_out(const AttentionInputs& inputs, const Case& c) {
  const Shape& s = c.shape;
  const std::int64_t repeats = s.heads / s.kv_heads;
  const at::Tensor q = inputs.query.to(at::kDouble);
  const at::Tensor k = inputs.key.to(at::kDouble).repeat_interleave(repeats, 1);
  const at::Tensor v = inputs.value.to(at::kDouble).repeat_interleave(repeats, 1);
  at::Tensor scores = at::matmul(q, k.transpose(-2, -1)) / std::sqrt(static_cast<double>(s.head_dim));
  const std::int64_t offset = c.mask.diagonal_offset(s.seq_len_q, s.seq_len_kv);
  if (c.scores.alibi) {
    std::vector<double> slopes;
    for (std::int64_t h = 0; h < s.heads; ++h) slopes.push_back(std::pow(2.0, -8.0 * static_cast<double>(h + 1) / s.heads));
    const at::Tensor slope = at::tensor(slopes, at::kDouble).view({1, -1, 1, 1});
    const at::Tensor i = at::arange(s.seq_len_q, at::kDouble).view({-1, 1});
    const at::Tensor j = at::arange(s.seq_len_kv, at::kDouble).view({1, -1});
    scores = scores - slope * (i + static_cast<double>(offset) - j).abs();
  }
  if (c.mask.is_causal()) {
    const at::Tensor i = at::arange(s.seq_len_q, at::kLong).view({-1, 1});
    const at::Tensor j = at::arange(s.seq_len_kv, at::kLong).view({1, -1});
    scores = scores.masked_fill(j > i + offset, -INFINITY);
  }
  const at::Tensor top = std::get<0>(scores.max(-1, true));
  const at::Tensor weights = at::exp(scores - top);
  at::Tensor total = weights.sum(-1, true);
  if (c.scores.sinks) total = total + at::exp(inputs.sinks.to(at::kDouble).view({1, -1, 1, 1}) - top);
  return at::matmul(weights / total, v);
}

TEST(ScoreMods, AlibiSlopesAreThePapersStandardOnes) {
  const std::vector<double> eight = alibi_slopes(8);
  ASSERT_EQ(eight.size(), 8u);
  for (int h = 0; h < 8; ++h) EXPECT_DOUBLE_EQ(eight[h], std::pow(2.0, -(h + 1))) << h;
  // 12 heads: the 8 of eight, then every other slope of sixteen (2^-0.5, 2^-1.5, 2^-2.5, 2^-3.5).
  const std::vector<double> twelve = alibi_slopes(12);
  ASSERT_EQ(twelve.size(), 12u);
  for (int h = 0; h < 8; ++h) EXPECT_DOUBLE_EQ(twelve[h], eight[h]);
  for (int h = 0; h < 4; ++h) EXPECT_DOUBLE_EQ(twelve[8 + h], std::pow(2.0, -0.5 - h)) << h;
  EXPECT_DOUBLE_EQ(alibi_slopes(1).at(0), std::pow(2.0, -8.0));
}

TEST(ScoreMods, LabelsNameEachModificationAfterTheMask) {
  ScoreMod mods;
  EXPECT_EQ(mods.label(), "");
  mods.sinks = true;
  EXPECT_EQ(mods.label(), "sinks");
  mods.alibi = true;
  mods.softcap = 30.0;
  EXPECT_EQ(mods.label(), "softcap30 alibi sinks");
  Case c = score_mod_case(Mask(true), true, false);
  EXPECT_EQ(c.label(), "naive 2x8/2x24x40x16 fp32 causal alibi");
  ScoreMod alibi_only;
  alibi_only.alibi = true;
  EXPECT_TRUE(ScoreMod{} < alibi_only);
  EXPECT_FALSE(alibi_only < ScoreMod{});
  EXPECT_NE(alibi_only, mods);
}

// Issue 56: the keys are one list, and each has the words exclude rules match, its
// switch and its FLOP clause (what a next score modification adds in one place).
TEST(ScoreMods, EachKeyHasItsWordItsSwitchAndItsFlopClause) {
  EXPECT_EQ(kScoreModKeys, (std::vector<std::string>{"softcap", "alibi", "sinks"}));
  ScoreMod on;
  on.softcap = 12.5;
  on.alibi = true;
  on.sinks = true;
  const std::vector<std::string> off_words = {"none", "false", "false"}, on_words = {"12.5", "true", "true"};
  for (std::size_t i = 0; i < kScoreModKeys.size(); ++i) {
    SCOPED_TRACE(kScoreModKeys[i]);
    EXPECT_FALSE(ScoreMod{}.has(i));
    EXPECT_TRUE(on.has(i));
    EXPECT_EQ(ScoreMod{}.word(i), off_words[i]);
    EXPECT_EQ(on.word(i), on_words[i]);
    EXPECT_EQ(std::string(ScoreMod::flop_clause(i)).rfind("; ", 0), 0u);
  }
  EXPECT_THROW(on.word(kScoreModKeys.size()), std::logic_error);
  EXPECT_THROW(ScoreMod::flop_clause(kScoreModKeys.size()), std::logic_error);
}

// Every mask kind: top-left causal (offset 0), bottom-right causal and none
// (offset Skv - Sq, FlashAttention's ALiBi distances); ALiBi alone, sinks alone, both.
TEST(ScoreMods, NaiveAndTheReferenceComputeAlibiAndSinksAsWrittenOut) {
  at::NoGradGuard no_grad;
  const std::vector<Mask> masks = {Mask(true), Mask(CausalAlignment::bottom_right, std::nullopt, std::nullopt), Mask(false)};
  for (const Mask& mask : masks) {
    for (const auto& [alibi, sinks] : std::vector<std::pair<bool, bool>>{{true, false}, {false, true}, {true, true}}) {
      const Case c = score_mod_case(mask, alibi, sinks);
      const AttentionInputs inputs = make_inputs(c, Device::cpu(), 17);
      const at::Tensor expected = written_out(inputs, c);
      const std::string what = c.label();
      EXPECT_LT(relative_error(reference_attention(inputs), expected), 1e-12) << what;
      Case plain = c;
      plain.scores = ScoreMod{};
      EXPECT_GT(relative_error(reference_attention(make_inputs(plain, Device::cpu(), 17)), expected), 1e-2)
          << what << ": the modification must matter at this size";
      for (const char* name : {"naive", "naive_inplace"}) {
        EXPECT_LT(relative_error(find_variant(name)->forward(inputs), expected), 1e-5) << name << " " << what;
      }
    }
  }
}

TEST(ScoreMods, SinksAreSeededPerHeadAndAlibisBiasHoldsTheMask) {
  const Case c = score_mod_case(Mask(true), true, true);
  const AttentionInputs inputs = make_inputs(c, Device::cpu(), 17);
  ASSERT_TRUE(inputs.sinks.defined());
  EXPECT_EQ(inputs.sinks.sizes(), (std::vector<std::int64_t>{8}));
  EXPECT_EQ(inputs.sinks.scalar_type(), at::kFloat);
  // seed + 3's generator, as Python draws them: torch.randn(heads, generator=Generator().manual_seed(seed + 3)).
  at::Generator generator = at::make_generator<at::CPUGeneratorImpl>(20);
  generator.set_current_seed(20);
  EXPECT_TRUE(at::equal(inputs.sinks, at::randn({8}, generator, at::TensorOptions().dtype(at::kFloat))));
  EXPECT_TRUE(at::equal(make_inputs(c, Device::cpu(), 17).sinks, inputs.sinks));
  EXPECT_FALSE(at::equal(make_inputs(c, Device::cpu(), 18).sinks, inputs.sinks));
  ASSERT_TRUE(inputs.alibi_bias.defined());
  EXPECT_EQ(inputs.alibi_bias.sizes(), (std::vector<std::int64_t>{1, 8, 24, 40}));
  EXPECT_EQ(inputs.alibi_bias.scalar_type(), at::kFloat);
  // Row 3 of head 0 (slope 1/2): keys 0..3 at 1.5, 1, 0.5, 0; key 4 on is masked.
  const at::Tensor row = inputs.alibi_bias[0][0][3];
  EXPECT_FLOAT_EQ(row[0].item<float>(), -1.5f);
  EXPECT_FLOAT_EQ(row[3].item<float>(), 0.0f);
  EXPECT_TRUE(std::isinf(row[4].item<float>()));
  // Nothing else of the case changes: q, k, v are the plain case's.
  const AttentionInputs plain = make_inputs(score_mod_case(Mask(true), false, false), Device::cpu(), 17);
  EXPECT_TRUE(at::equal(plain.query, inputs.query));
  EXPECT_FALSE(plain.alibi_bias.defined());
  EXPECT_FALSE(plain.sinks.defined());
  // A variant that wrote into the sinks or the bias would change every later variant's case.
  const InputGuard guard(inputs);
  inputs.sinks.mul_(2);
  EXPECT_EQ(guard.changed(inputs), "sinks");
}

// SDPA takes ALiBi as its float attn_mask (the mask inside it) on the math
// backend and PyTorch's own choice, and refuses sinks with the reason.
TEST(ScoreMods, SdpaTakesAlibiAsAFloatMaskAndRefusesSinks) {
  at::NoGradGuard no_grad;
  for (const Mask& mask : {Mask(true), Mask(false)}) {
    const Case c = score_mod_case(mask, true, false);
    const AttentionInputs inputs = make_inputs(c, Device::cpu(), 17);
    const at::Tensor expected = written_out(inputs, c);
    for (const char* name : {"sdpa_math", "sdpa_auto", "sdpa_flash"}) {
      const Support support = find_variant(name)->check(inputs);
      ASSERT_TRUE(support.supported) << name << ": " << support.reason;
      EXPECT_LT(relative_error(find_variant(name)->forward(inputs), expected), 1e-5) << name << " " << c.label();
    }
  }
  const AttentionInputs with_sinks = make_inputs(score_mod_case(Mask(true), true, true), Device::cpu(), 17);
  for (const char* name : {"sdpa_math", "sdpa_flash", "sdpa_efficient", "sdpa_cudnn", "sdpa_auto"}) {
    const Support support = find_variant(name)->check(with_sinks);
    EXPECT_FALSE(support.supported) << name;
    EXPECT_EQ(support.reason.rfind("attention sinks: scaled_dot_product_attention's softmax has no per-head sink logit", 0), 0u)
        << name << ": " << support.reason;
  }
}

// The float64 references split a case by key/value heads and query rows
// (reference_chunks.hpp): each chunk must take its own heads' slopes and sinks
// and its own rows' distances. A budget of one row per chunk against none.
TEST(ScoreMods, ChunkedReferencesTakeEachChunksHeadsAndRows) {
  for (const Mask& mask : {Mask(true), Mask(CausalAlignment::bottom_right, std::nullopt, std::nullopt)}) {
    Case c = score_mod_case(mask, true, true);
    c.dtype = Dtype::bf16;
    const AttentionInputs inputs = make_inputs(c, Device::cpu(), 5);
    at::Tensor output;
    {
      at::NoGradGuard no_grad;
      output = find_variant("naive")->forward(inputs);
    }
    AccuracyCheck whole(Device::cpu()), by_rows(Device::cpu(), /*chunk_score_bytes=*/1);
    const double error = whole.relative_error(output, inputs);
    EXPECT_GT(error, 0.0);
    EXPECT_LT(error, 2e-2);
    EXPECT_NEAR(by_rows.relative_error(output, inputs), error, 1e-12 * error) << c.label();
    // Gradients: naive's bf16 backward against the float64 autograd, chunked and not.
    const AttentionInputs leaves = as_leaves(inputs);
    const at::Tensor grad_output = make_grad_output(c, Device::cpu(), 5);
    at::Tensor out;
    {
      const at::AutoGradMode grad_on(true);
      out = find_variant("naive")->forward(leaves);
    }
    const auto grads = torch::autograd::grad({out}, {leaves.query, leaves.key, leaves.value}, {grad_output});
    GradientCheck whole_grads(Device::cpu()), row_grads(Device::cpu(), 1);
    const GradientErrors a = whole_grads.relative_errors({grads[0], grads[1], grads[2]}, leaves, grad_output);
    const GradientErrors b = row_grads.relative_errors({grads[0], grads[1], grads[2]}, leaves, grad_output);
    for (const auto& [x, y] : {std::pair{a.query, b.query}, std::pair{a.key, b.key}, std::pair{a.value, b.value}}) {
      EXPECT_GT(x, 0.0);
      EXPECT_LT(x, 5e-2) << c.label();
      EXPECT_NEAR(x, y, 1e-9 * x) << c.label();
    }
  }
}

// A variable-length batch: each sequence's ALiBi distances from its own lengths
// (bottom right), its sinks the batch's; naive on the padded batch equals each
// sequence run alone.
TEST(ScoreMods, AVariableLengthBatchTakesEachSequencesOwnDistances) {
  Shape shape{3, 4, 2, 2, 6, 8};
  shape.seq_lens_q = {2, 1, 2};
  shape.seq_lens_kv = {6, 3, 4};
  Case c{0, "naive", shape, Dtype::fp32, Mask(CausalAlignment::bottom_right, std::nullopt, std::nullopt)};
  c.scores.alibi = true;
  c.scores.sinks = true;
  const AttentionInputs inputs = make_inputs(c, Device::cpu(), 23);
  EXPECT_EQ(inputs.alibi_bias.sizes(), (std::vector<std::int64_t>{3, 4, 2, 6}));
  at::NoGradGuard no_grad;
  const at::Tensor output = find_variant("naive")->forward(inputs);
  EXPECT_LT(relative_error(output.narrow(2, 0, 1), reference_attention(inputs).narrow(2, 0, 1)), 1e-5);
  for (std::int64_t b = 0; b < 3; ++b) {
    const std::int64_t lq = shape.seq_lens_q[b], lk = shape.seq_lens_kv[b];
    Case alone{0, "naive", Shape{1, 4, 2, lq, lk, 8}, Dtype::fp32, c.mask};
    alone.scores = c.scores;
    AttentionInputs own = make_inputs(alone, Device::cpu(), 23);
    own.query = inputs.query[b].unsqueeze(0).narrow(2, 0, lq);
    own.key = inputs.key[b].unsqueeze(0).narrow(2, 0, lk);
    own.value = inputs.value[b].unsqueeze(0).narrow(2, 0, lk);
    own.sinks = inputs.sinks;
    EXPECT_LT(relative_error(output[b].unsqueeze(0).narrow(2, 0, lq), written_out(own, alone)), 1e-5) << b;
  }
}

}  // namespace
}  // namespace attnsweep
