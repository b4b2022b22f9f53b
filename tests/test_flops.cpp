// The FLOP and byte conventions (docs/schema.md).
#include <gtest/gtest.h>

#include "runner/measure/flops.hpp"

namespace attnsweep {
namespace {

TEST(Flops, NonCausalIsFourBHSqSkvD) {
  const Shape shape{8, 16, 16, 1024, 1024, 64};
  EXPECT_DOUBLE_EQ(forward_flops(shape, false), 4.0 * 8 * 16 * 1024 * 1024 * 64);
}

TEST(Flops, CausalCountsAttendedPairsExactly) {
  const Shape shape{8, 16, 16, 1024, 1024, 64};
  EXPECT_DOUBLE_EQ(attended_pairs(shape, true), 1024.0 * 1025 / 2);
  EXPECT_DOUBLE_EQ(forward_flops(shape, true), 4.0 * 8 * 16 * 64 * (1024.0 * 1025 / 2));
  // Just over half of the non-causal count, never more (no MFU over 100%).
  EXPECT_NEAR(forward_flops(shape, true) / forward_flops(shape, false), 0.5, 0.001);
}

TEST(Flops, CausalWithDifferentLengthsIsTopLeftAligned) {
  EXPECT_DOUBLE_EQ(attended_pairs(Shape{1, 1, 1, 1, 4096, 64}, true), 1);      // query 0 sees key 0
  EXPECT_DOUBLE_EQ(attended_pairs(Shape{1, 1, 1, 1, 4096, 64}, false), 4096);
  EXPECT_DOUBLE_EQ(attended_pairs(Shape{1, 1, 1, 6, 4, 64}, true), 1 + 2 + 3 + 4 + 4 + 4);
}

TEST(Flops, MinimumBytesCountGroupedKeyValueHeadsOnce) {
  const Shape shape{2, 8, 2, 16, 32, 64};
  EXPECT_DOUBLE_EQ(forward_min_bytes(shape, Dtype::bf16), 2.0 * (2 * 2 * 8 * 16 * 64 + 2 * 2 * 2 * 32 * 64));
  EXPECT_DOUBLE_EQ(forward_min_bytes(shape, Dtype::fp32), 2 * forward_min_bytes(shape, Dtype::fp16));
}

// Issue 36: q k^T over head_dim, p v over the values' head dim (MLA's 192/128);
// q and k are read with head_dim, v read and the output written with head_dim_v.
TEST(Flops, AValueHeadDimCountsEachMatmulAndEachTensorWithItsOwnDim) {
  const Shape mla{2, 8, 2, 16, 32, 192, {}, {}, 0, 128};
  EXPECT_DOUBLE_EQ(forward_flops(mla, false), 2.0 * 2 * 8 * (192 + 128) * 16 * 32);
  EXPECT_DOUBLE_EQ(forward_min_bytes(mla, Dtype::bf16),
                   2.0 * (2 * 8 * 16 * 192 + 2 * 8 * 16 * 128 + 2 * 2 * 32 * 192 + 2 * 2 * 32 * 128));
  // A backward: q, dq, k, dk with 192; out, dout, v, dv with 128.
  EXPECT_DOUBLE_EQ(pass_min_bytes(mla, Dtype::bf16, Pass::backward),
                   2.0 * (2 * 2 * 8 * 16 * (192 + 128) + 2 * 2 * 2 * 32 * (192 + 128)));
  // Equal dims written out count as before.
  const Shape equal{2, 8, 2, 16, 32, 64, {}, {}, 0, 64};
  EXPECT_DOUBLE_EQ(forward_flops(equal, true), forward_flops(Shape{2, 8, 2, 16, 32, 64}, true));
  EXPECT_DOUBLE_EQ(pass_min_bytes(equal, Dtype::fp16, Pass::backward),
                   pass_min_bytes(Shape{2, 8, 2, 16, 32, 64}, Dtype::fp16, Pass::backward));
  EXPECT_EQ(flop_convention({}), std::string(kFlopConvention));
  // Score modifications (issue 36) count no flops of their own, and say so only where a run has them.
  ConventionFacts capped, alibi, sinks, value_dims;
  capped.score_mods = {"softcap"};
  alibi.score_mods = {"alibi"};
  sinks.score_mods = {"sinks"};
  value_dims.value_head_dims = true;
  EXPECT_NE(flop_convention(capped).find("soft-capping (softcap) adds no flops"), std::string::npos);
  EXPECT_EQ(flop_convention(capped).find("ALiBi"), std::string::npos);
  EXPECT_NE(flop_convention(alibi).find("ALiBi adds no flops"), std::string::npos);
  EXPECT_EQ(flop_convention(alibi).find("sinks"), std::string::npos);
  EXPECT_NE(flop_convention(sinks).find("attention sinks add no flops and no min_bytes"), std::string::npos);
  EXPECT_NE(flop_convention(value_dims).find("flops = 2 * batch * heads * (D + Dv) * pairs"), std::string::npos);
  // Stored with each run and compared between runs: the clauses keep their order (softcap, ALiBi, sinks, fp8).
  ConventionFacts all;
  all.score_mods = {"sinks", "softcap", "alibi"};
  all.fp8 = true;
  const std::string text = flop_convention(all);
  EXPECT_LT(text.find("; soft-capping"), text.find("; ALiBi")) << text;
  EXPECT_LT(text.find("; ALiBi"), text.find("; attention sinks")) << text;
  EXPECT_LT(text.find("; attention sinks"), text.find("; fp8")) << text;
  EXPECT_NE(text.find("; fp8"), std::string::npos) << text;
}

TEST(Flops, ABackwardIsTwoAndAHalfForwardsAndATrainingStepThreeAndAHalf) {
  // FlashAttention's convention (issue 23): the backward's five products against the forward's two.
  const Shape shape{8, 16, 16, 1024, 1024, 64};
  for (const bool causal : {false, true}) {
    const double forward = forward_flops(shape, causal);
    EXPECT_DOUBLE_EQ(pass_flops(shape, causal, Pass::forward), forward);
    EXPECT_DOUBLE_EQ(pass_flops(shape, causal, Pass::backward), 2.5 * forward);
    EXPECT_DOUBLE_EQ(pass_flops(shape, causal, Pass::forward_backward), 3.5 * forward);
  }
  // The stored convention of forward-only runs is unchanged, so compare still matches them.
  EXPECT_EQ(std::string(kFlopConvention).rfind("attended_pairs_v1:", 0), 0u);
}

// Issue 25: only the pairs a serving mask lets through count, and a window reads
// only the keys some query sees.
TEST(Flops, ServingMasksCountTheirPairsAndAWindowItsKeys) {
  const Shape decode{1, 1, 1, 4, 32, 64};  // 4 new queries over a cache of 32 keys
  const Mask bottom_right(CausalAlignment::bottom_right, std::nullopt, std::nullopt);
  EXPECT_DOUBLE_EQ(attended_pairs(decode, bottom_right), 29 + 30 + 31 + 32);
  EXPECT_DOUBLE_EQ(attended_pairs(decode, true), 1 + 2 + 3 + 4);  // the top left, for contrast
  const Mask sliding(CausalAlignment::bottom_right, 8, 0);        // 8 keys back and the diagonal: 9 a row
  EXPECT_DOUBLE_EQ(attended_pairs(decode, sliding), 4 * 9);
  EXPECT_DOUBLE_EQ(attended_pairs(Shape{1, 1, 1, 6, 6, 64}, Mask(CausalAlignment::none, 1, 2)),
                   3 + 4 + 4 + 4 + 3 + 2);  // two-sided, clipped at both ends
  // Keys 20..31 are seen (row 0 from 28 - 8, row 3 up to 31): 12 of 32.
  EXPECT_EQ(sliding.keys_seen(4, 32), 12);
  EXPECT_DOUBLE_EQ(forward_min_bytes(decode, Dtype::bf16, sliding), 2.0 * (2 * 4 * 64 + 2 * 12 * 64));
  EXPECT_DOUBLE_EQ(forward_min_bytes(decode, Dtype::bf16, bottom_right), forward_min_bytes(decode, Dtype::bf16));
  // The stored convention names the masks' rule only where a run has them.
  EXPECT_EQ(flop_convention({}), kFlopConvention);
  ConventionFacts serving;
  serving.serving_masks = true;
  EXPECT_NE(flop_convention(serving).find("causal bottom-right pairs"), std::string::npos);
}

}  // namespace
}  // namespace attnsweep

namespace attnsweep {
namespace {

// Issue 25: a variable-length batch counts each sequence with its own lengths,
// never the padded batch's.
TEST(Flops, AVariableLengthBatchIsTheSumOfItsSequences) {
  Shape batch{3, 4, 2, 2, 10, 16};
  batch.seq_lens_q = {2, 1, 2};
  batch.seq_lens_kv = {10, 3, 6};
  const Mask bottom_right(CausalAlignment::bottom_right, std::nullopt, std::nullopt);
  // Rows see 9 + 10, 3, 5 + 6 keys.
  EXPECT_DOUBLE_EQ(attended_pairs(batch, bottom_right), 19 + 3 + 11);
  EXPECT_DOUBLE_EQ(forward_flops(batch, bottom_right), 4.0 * 4 * 16 * (19 + 3 + 11));
  EXPECT_DOUBLE_EQ(forward_flops(batch, false), 4.0 * 4 * 16 * (2 * 10 + 1 * 3 + 2 * 6));
  // q and out over 5 query rows, k and v over 19 keys, at 2 kv heads.
  EXPECT_DOUBLE_EQ(forward_min_bytes(batch, Dtype::bf16), 2.0 * (2 * 4 * 5 * 16 + 2 * 2 * 19 * 16));
  EXPECT_DOUBLE_EQ(pass_min_bytes(batch, Dtype::bf16, Pass::forward, Mask(false)), forward_min_bytes(batch, Dtype::bf16));
  ConventionFacts varlen;
  varlen.variable_lengths = true;
  EXPECT_NE(flop_convention(varlen).find("a variable-length batch counts the sum over its sequences"), std::string::npos);
  EXPECT_EQ(flop_convention({}), std::string(kFlopConvention));
}

}  // namespace
}  // namespace attnsweep
