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

}  // namespace
}  // namespace attnsweep
