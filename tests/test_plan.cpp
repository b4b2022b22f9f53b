// Sweep expansion: cartesian product, zipped rows, exclusions, duplicates.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "runner/common/mask.hpp"
#include "runner/config/config.hpp"
#include "runner/plan/plan.hpp"
#include "runner/plan/shard.hpp"
#include "tests/support/two_varlen_batches.hpp"

namespace attnsweep {
namespace {

Plan plan_of(const std::string& yaml) { return make_plan(parse_config(yaml, "plan.yaml")); }

// The planner's check for a query row that sees no key, against the row-by-row
// definition on every small shape and mask, and on a shape of millions of tokens.
TEST(Plan, TheFirstRowThatSeesNoKeyIsTheRowByRowAnswerAlsoOnShapesOfMillionsOfTokens) {
  const std::vector<std::optional<std::int64_t>> bounds = {std::nullopt, 0, 1, 2, 3, 5, 9};
  int masks = 0, empty = 0;
  for (CausalAlignment alignment : {CausalAlignment::none, CausalAlignment::top_left, CausalAlignment::bottom_right}) {
    for (const auto& left : bounds) {
      for (const auto& right : bounds) {
        const Mask mask(alignment, left, right);
        for (std::int64_t q = 1; q <= 13; ++q) {
          for (std::int64_t kv = 1; kv <= 13; ++kv) {
            std::optional<std::int64_t> expected;
            for (std::int64_t row = 0; row < q && mask.any(); ++row) {
              if (mask.keys_of_row(row, q, kv).count() == 0) {
                expected = row;
                break;
              }
            }
            ++masks;
            empty += expected.has_value();
            ASSERT_EQ(mask.first_empty_row(q, kv), expected)
                << mask.label() << " left " << left.value_or(-1) << " right " << right.value_or(-1) << " q " << q
                << " kv " << kv;
          }
        }
      }
    }
  }
  EXPECT_EQ(masks, 3 * 7 * 7 * 13 * 13);
  EXPECT_GT(empty, 1000);  // the comparison saw many masks with empty rows, not only full ones
  // Top-left causal with a 1000-key window over more queries than keys: row r sees keys
  // r-1000..min(r, kv-1), so the first row past kv + 1000 sees none.
  const Mask windowed(CausalAlignment::top_left, 1000, std::nullopt);
  EXPECT_EQ(windowed.first_empty_row(4'255'396, 4'000'000), 4'001'000);
  EXPECT_EQ(windowed.first_empty_row(4'001'000, 4'000'000), std::nullopt);
  EXPECT_EQ(Mask(CausalAlignment::bottom_right, std::nullopt, std::nullopt).first_empty_row(4'255'396, 4'000'000), 0);
  // The fuzzer's config that took the planner over 10 s (110 batch sizes x 10 heads x 28 lengths up to 4,255,396
  // x 10 head dims, causal): planned at once now, every shape's rows checked.
  std::string lengths;
  for (int i = 1; i <= 27; ++i) lengths += std::to_string(i) + ",";
  const Plan plan = plan_of("variants: [naive]\ndtypes: [fp32]\ncausal: true\n"
                            "shapes: {batch: [1,2,3,4,5,6,7,8,9,10], heads: [1,2,3,4,5,6,7,8,9,10], seq_len: [" +
                            lengths + "4255396], head_dim: [1,2,3,4,5,6,7,8,9,10]}\n");
  EXPECT_EQ(plan.cases.size(), 10u * 10 * 28 * 10);
}

TEST(Plan, CartesianProductWithVariantsFastest) {
  const Plan plan = plan_of(R"(
variants: [naive, sdpa_math, sdpa_flash]
dtypes: [bf16, fp32]
causal: [true, false]
shapes: {batch: [1, 2], heads: 4, seq_len: [64, 128], head_dim: 32}
)");
  ASSERT_EQ(plan.cases.size(), 3u * 2 * 2 * 2 * 2);
  for (std::size_t i = 0; i < plan.cases.size(); ++i) EXPECT_EQ(plan.cases[i].plan_index, static_cast<int>(i));
  EXPECT_EQ(plan.cases[0].variant, "naive");
  EXPECT_EQ(plan.cases[1].variant, "sdpa_math");
  EXPECT_EQ(plan.cases[2].variant, "sdpa_flash");
  EXPECT_EQ(plan.cases[0].shape, plan.cases[2].shape);
  EXPECT_EQ(plan.cases[3].mask, Mask(false));
  // Every combination appears exactly once.
  std::set<std::string> labels;
  for (const auto& c : plan.cases) labels.insert(c.label());
  EXPECT_EQ(labels.size(), plan.cases.size());
  EXPECT_EQ(plan.cases[0].shape.kv_heads, 4);  // defaults to heads
  EXPECT_EQ(plan.cases[0].shape.seq_len_q, plan.cases[0].shape.seq_len_kv);
}

// Issue 36: head_dim_v, the values' head dim, is a shape axis like head_dim.
// Where it equals head_dim the shape is the one without it (label, identity,
// equality); where it differs the label says so, and an exclude rule matches it.
TEST(Plan, TheValueHeadDimIsAShapeAxisAndEqualToHeadDimIsTheSameShape) {
  const Plan plan = plan_of(R"(
variants: [naive]
dtypes: [bf16]
shapes:
  - {batch: 1, heads: 4, seq_len: 64, head_dim: 192, head_dim_v: [128, 192, 64]}
  - {batch: 1, heads: 4, seq_len: 64, head_dim: 192}
  - {batch: 1, heads: 4, seq_len: 64, zip: [{head_dim: 64, head_dim_v: 512}]}
exclude:
  - {head_dim_v: 64}
)");
  ASSERT_EQ(plan.cases.size(), 3u);  // 192/192 is the second block's shape (a duplicate); 192/64 excluded
  EXPECT_EQ(plan.excluded, 1);
  EXPECT_EQ(plan.cases[0].shape.label(), "1x4x64x192/128");
  EXPECT_EQ(plan.cases[0].shape.head_dim_v, 128);
  EXPECT_EQ(plan.cases[0].shape.value_dim(), 128);
  EXPECT_EQ(plan.cases[1].shape.label(), "1x4x64x192");
  EXPECT_EQ(plan.cases[1].shape.head_dim_v, 0);  // stored as 0: the same as head_dim
  EXPECT_EQ(plan.cases[1].shape.value_dim(), 192);
  EXPECT_EQ(plan.cases[2].shape.label(), "1x4x64x64/512");
  Shape written = plan.cases[1].shape;
  written.head_dim_v = 192;  // written out, equal to head_dim: the same shape
  EXPECT_EQ(written, plan.cases[1].shape);
  EXPECT_FALSE(plan.cases[0].shape == plan.cases[1].shape);
  EXPECT_NE(plan.cases[0].shape, plan.cases[1].shape);
}

// Issue 36: softcap is an axis like causal: each value crossed with every mask,
// in the order written, next to each other for one shape and dtype (the inputs
// are drawn once); an exclude rule matches a cap however it is written.
TEST(Plan, SoftcapsAreCrossedWithTheMasksAndExcludeRulesMatchThem) {
  const Plan plan = plan_of(R"(
variants: [naive, sdpa_math]
dtypes: [fp32]
causal: [true, false]
softcap: [none, 30, 12.5]
shapes: {batch: 1, heads: 2, seq_len: 16, head_dim: 8}
exclude:
  - {variant: sdpa_math, softcap: [30.0, 12.5]}
  - {causal: false, softcap: 12.5}
)");
  std::vector<std::string> labels;
  for (const Case& c : plan.cases) labels.push_back(c.label());
  EXPECT_EQ(labels, (std::vector<std::string>{
                        "naive 1x2x16x8 fp32 causal", "sdpa_math 1x2x16x8 fp32 causal",
                        "naive 1x2x16x8 fp32 causal softcap30", "naive 1x2x16x8 fp32 causal softcap12.5",
                        "naive 1x2x16x8 fp32 full", "sdpa_math 1x2x16x8 fp32 full",
                        "naive 1x2x16x8 fp32 full softcap30"}));
  EXPECT_EQ(plan.excluded, 5);  // sdpa_math's four capped cases, naive's full softcap12.5
  EXPECT_DOUBLE_EQ(*plan.cases[2].scores.softcap, 30.0);
  EXPECT_FALSE(plan.cases[0].scores.any());
  EXPECT_EQ(plan.cases[3].mask_label(), "causal softcap12.5");
  EXPECT_FALSE(plan.cases[2].same_measurement(plan.cases[0]));
}

// Issue 36: alibi and sinks cross with the softcaps and the masks like softcap
// does, and exclude rules match them (true, false or both).
TEST(Plan, AlibiAndSinksAreCrossedWithTheMasksAndExcludeRulesMatchThem) {
  const Plan plan = plan_of(R"(
variants: [naive, sdpa_math]
dtypes: [fp32]
causal: [true, false]
alibi: [false, true]
sinks: [false, true]
shapes: {batch: 1, heads: 2, seq_len: 16, head_dim: 8}
exclude:
  - {variant: sdpa_math, sinks: true}
  - {causal: false, alibi: [true], sinks: false}
)");
  std::vector<std::string> labels;
  for (const Case& c : plan.cases) labels.push_back(c.label());
  EXPECT_EQ(labels, (std::vector<std::string>{
                        "naive 1x2x16x8 fp32 causal", "sdpa_math 1x2x16x8 fp32 causal",
                        "naive 1x2x16x8 fp32 causal sinks",
                        "naive 1x2x16x8 fp32 causal alibi", "sdpa_math 1x2x16x8 fp32 causal alibi",
                        "naive 1x2x16x8 fp32 causal alibi sinks",
                        "naive 1x2x16x8 fp32 full", "sdpa_math 1x2x16x8 fp32 full",
                        "naive 1x2x16x8 fp32 full sinks",
                        "naive 1x2x16x8 fp32 full alibi sinks"}));
  EXPECT_EQ(plan.excluded, 6);  // sdpa_math's four with sinks, the two full alibi cases without
  EXPECT_TRUE(plan.cases[5].scores.alibi && plan.cases[5].scores.sinks);
  EXPECT_EQ(plan.cases[5].mask_label(), "causal alibi sinks");
  EXPECT_FALSE(plan.cases[3].same_measurement(plan.cases[0]));
  EXPECT_FALSE(plan.cases[2].same_measurement(plan.cases[5]));
}

// Issue 36: deterministic crosses inside the score modifications (a shape's
// deterministic and plain cases of one modification run next to each other),
// and exclude rules match it.
TEST(Plan, DeterministicIsCrossedWithTheScoreModificationsAndExcludeRulesMatchIt) {
  const Plan plan = plan_of(R"(
variants: [naive, sdpa_math]
dtypes: [fp32]
sinks: [false, true]
deterministic: [false, true]
passes: [backward]
shapes: {batch: 1, heads: 2, seq_len: 16, head_dim: 8}
exclude:
  - {variant: naive, deterministic: false}
  - {variant: sdpa_math, sinks: true}
)");
  std::vector<std::string> labels;
  for (const Case& c : plan.cases) labels.push_back(c.label());
  EXPECT_EQ(labels, (std::vector<std::string>{"sdpa_math 1x2x16x8 fp32 causal backward",
                                              "naive 1x2x16x8 fp32 causal deterministic backward",
                                              "sdpa_math 1x2x16x8 fp32 causal deterministic backward",
                                              "naive 1x2x16x8 fp32 causal sinks deterministic backward"}));
  EXPECT_EQ(plan.excluded, 4);
  EXPECT_FALSE(plan.cases[0].same_measurement(plan.cases[2]));
  EXPECT_EQ(plan.cases[3].mask_label(), "causal sinks deterministic");
}

TEST(Plan, ShuffledOrderIsAFixedPermutationOfThePlanDrawnFromTheSeed) {
  const Plan plan = plan_of(R"(
variants: [naive, sdpa_math, sdpa_flash]
dtypes: [bf16, fp32]
shapes: {batch: [1, 2, 4], heads: 4, seq_len: [64, 128], head_dim: 32}
)");
  const auto in_plan_order = execution_order(plan, CaseOrder::plan, 7);
  for (std::size_t i = 0; i < plan.cases.size(); ++i) EXPECT_EQ(in_plan_order[i].plan_index, static_cast<int>(i));
  const auto shuffled = execution_order(plan, CaseOrder::shuffled, 7);
  ASSERT_EQ(shuffled.size(), plan.cases.size());
  std::set<int> indexes;
  int moved = 0;
  for (std::size_t i = 0; i < shuffled.size(); ++i) {
    indexes.insert(shuffled[i].plan_index);
    moved += shuffled[i].plan_index != static_cast<int>(i);
    // A case keeps its identity: plan_index still names the same variant, shape and dtype.
    EXPECT_EQ(shuffled[i].label(), plan.cases[static_cast<std::size_t>(shuffled[i].plan_index)].label());
  }
  EXPECT_EQ(indexes.size(), plan.cases.size());
  EXPECT_GT(moved, static_cast<int>(plan.cases.size()) / 2);
  // The same seed gives the same order (resume and workers rely on it); another seed another.
  const auto again = execution_order(plan, CaseOrder::shuffled, 7), other = execution_order(plan, CaseOrder::shuffled, 8);
  bool same = true, differs = false;
  for (std::size_t i = 0; i < shuffled.size(); ++i) {
    same = same && again[i].plan_index == shuffled[i].plan_index;
    differs = differs || other[i].plan_index != shuffled[i].plan_index;
  }
  EXPECT_TRUE(same);
  EXPECT_TRUE(differs);
}

TEST(Plan, ZippedRowsAreTuplesNotAProduct) {
  const Plan plan = plan_of(R"(
variants: [sdpa_flash]
dtypes: [bf16]
causal: false
shapes:
  batch: [1, 4]
  heads: 32
  kv_heads: 8
  head_dim: 128
  zip:
    - {seq_len_q: 1, seq_len_kv: 4096}
    - {seq_len_q: 1, seq_len_kv: 8192}
    - {seq_len_q: 512, seq_len_kv: 512}
)");
  ASSERT_EQ(plan.cases.size(), 2u * 3);  // 2 batches x 3 rows, not 2 x 3 x 3
  std::set<std::pair<std::int64_t, std::int64_t>> lengths;
  for (const auto& c : plan.cases) {
    lengths.insert({c.shape.seq_len_q, c.shape.seq_len_kv});
    EXPECT_EQ(c.shape.kv_heads, 8);
    EXPECT_EQ(c.shape.heads, 32);
  }
  EXPECT_EQ(lengths, (std::set<std::pair<std::int64_t, std::int64_t>>{{1, 4096}, {1, 8192}, {512, 512}}));
  EXPECT_EQ(plan.cases[0].shape.label(), "1x32/8x1x4096x128");
}

TEST(Plan, ListOfShapeBlocksIsAUnionAndDuplicatesAreDropped) {
  const Plan plan = plan_of(R"(
variants: [naive]
dtypes: [fp32]
shapes:
  - {batch: 1, heads: 2, seq_len: [16, 32], head_dim: 8}
  - {batch: 1, heads: 2, seq_len: [32, 64], head_dim: 8}
)");
  ASSERT_EQ(plan.cases.size(), 3u);
  EXPECT_EQ(plan.duplicates, 1);
  EXPECT_EQ(plan.cases[2].shape.seq_len_q, 64);
}

TEST(Plan, EveryCaseKnowsTheShapesEntryItCameFrom) {
  // So that a refusal about one case (it does not fit in memory) names file:line:column.
  const Plan plan = plan_of(R"(variants: [naive, sdpa_math]
dtypes: [fp32]
shapes:
  - {batch: 1, heads: 2, seq_len: [16, 32], head_dim: 8}
  - batch: 1
    heads: 2
    seq_len: [32, 64]
    head_dim: 8
)");
  ASSERT_EQ(plan.cases.size(), 6u);
  for (int i : {0, 1, 2, 3}) {  // seq_len 16 and 32 from the first entry; its 32 is listed again, kept once
    EXPECT_EQ(plan.cases[i].where.line, 4) << plan.cases[i].label();
    EXPECT_EQ(plan.cases[i].where.column, 5) << plan.cases[i].label();
  }
  for (int i : {4, 5}) {
    EXPECT_EQ(plan.cases[i].where.line, 5) << plan.cases[i].label();
    EXPECT_EQ(plan.cases[i].where.column, 5) << plan.cases[i].label();
  }
  const Plan single = plan_of("variants: [naive]\ndtypes: [fp32]\nshapes:\n  batch: 1\n  heads: 2\n  seq_len: 16\n  head_dim: 8\n");
  EXPECT_EQ(single.cases[0].where.line, 4);
  EXPECT_EQ(single.cases[0].where.column, 3);
}

TEST(Plan, ExcludeRulesMatchEveryKeyOfOneRule) {
  const Plan plan = plan_of(R"(
variants: [naive, sdpa_math, sdpa_flash]
dtypes: [bf16, fp32]
shapes: {batch: 1, heads: 2, seq_len: [128, 1024], head_dim: 16}
exclude:
  - {variant: sdpa_math, seq_len: 1024}
  - {variant: [naive, sdpa_flash], dtype: fp32, seq_len: 128}
)");
  // 12 cases: sdpa_math at 1024 (2 dtypes) and naive/flash fp32 at 128 (2) removed.
  EXPECT_EQ(plan.excluded, 4);
  ASSERT_EQ(plan.cases.size(), 8u);
  for (const auto& c : plan.cases) {
    EXPECT_FALSE(c.variant == "sdpa_math" && c.shape.seq_len_q == 1024) << c.label();
    EXPECT_FALSE(c.variant != "sdpa_math" && c.dtype == Dtype::fp32 && c.shape.seq_len_q == 128) << c.label();
  }
}

// Issue 33, item 6: labels identify. These two batches share their range, and
// their 4-digit digests collided: both were 4x2xvarlen[q 1, kv 8-32 #74b2]x8.
TEST(Plan, TwoVariableLengthBatchesOfOneRangeHaveTwoLabels) {
  const Plan plan = plan_of(attnsweep::testing::kTwoVarlenBatchesOfOneRange);
  ASSERT_EQ(plan.cases.size(), 2u);
  // The first 12 hex digits of sha256("1,1,1,1;8,8,12,32") and of sha256("1,1,1,1;8,15,19,32").
  EXPECT_EQ(plan.cases[0].shape.label(), "4x2xvarlen[q 1, kv 8-32 #74b2e04990ae]x8");
  EXPECT_EQ(plan.cases[1].shape.label(), "4x2xvarlen[q 1, kv 8-32 #74b200a3104c]x8");
  EXPECT_EQ(plan.cases[0].shape.varlen_label(), "varlen[q 1, kv 8-32 #74b2e04990ae]");
  EXPECT_NE(plan.cases[0].label(), plan.cases[1].label());
  // A sequence alone is uniform and carries no lists.
  const Shape third = plan.cases[1].shape.sequence(2);
  EXPECT_EQ(third, (Shape{1, 2, 2, 1, 19, 8, {}, {}, 0}));
}

// An exclude rule is a set of values, each rule once (a case scanned every
// rule's list before: tests/test_cli_labels.cpp times the large kind). Rules
// repeated by aliases, and the same rule twice, exclude as they always did.
TEST(Plan, LongAndRepeatedExcludeRulesMatchAsBefore) {
  std::string lengths;
  for (int n = 1; n <= 5000; ++n) lengths += (n > 1 ? "," : "") + std::to_string(n * 7);
  std::string yaml = "variants: [naive]\ndtypes: [fp32]\ncausal: false\n"
                     "shapes: {batch: [1, 2], heads: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], "
                     "head_dim: 8, seq_len: [";
  for (int s = 1; s <= 300; ++s) yaml += (s > 1 ? "," : "") + std::to_string(s);
  yaml += "]}\nexclude:\n  - {seq_len: &lengths [" + lengths + "]}\n";
  for (int r = 1; r < 20; ++r) yaml += "  - {page_size: " + std::to_string(r) + ", seq_len: *lengths}\n";
  yaml += "  - {seq_len: *lengths}\n";  // the first rule again
  const Plan plan = plan_of(yaml);
  // seq_len 7, 14, ..., 294 (42 lengths) are excluded for every batch and heads.
  EXPECT_EQ(plan.excluded, 42 * 20);
  EXPECT_EQ(plan.cases.size(), 6000u - 840u);
  for (const Case& c : plan.cases) ASSERT_NE(c.shape.seq_len_q % 7, 0) << c.label();
}

TEST(Plan, ExcludeSeqLenOnlyMatchesSquareShapes) {
  const Plan plan = plan_of(R"(
variants: [naive]
dtypes: [fp32]
causal: false
shapes:
  - {batch: 1, heads: 2, seq_len: 64, head_dim: 8}
  - {batch: 1, heads: 2, seq_len_q: 1, seq_len_kv: 64, head_dim: 8}
exclude: [{seq_len: 64}]
)");
  ASSERT_EQ(plan.cases.size(), 1u);
  EXPECT_EQ(plan.cases[0].shape.seq_len_q, 1);
}

const char* const kTwoVariants = R"(
variants: [naive, sdpa_flash]
dtypes: [bf16, fp32]
causal: [true, false]
shapes: {batch: [1, 2], heads: 4, seq_len: 64, head_dim: 32}
)";

TEST(Plan, AForwardOnlyPlanIsExactlyThePlanBeforeThePassAxis) {
  const Plan before = plan_of(kTwoVariants);
  const Plan forward = plan_of(std::string(kTwoVariants) + "passes: [forward]\n");
  ASSERT_EQ(before.cases.size(), 2u * 2 * 2 * 2);
  ASSERT_EQ(forward.cases.size(), before.cases.size());
  for (std::size_t i = 0; i < before.cases.size(); ++i) {
    EXPECT_EQ(before.cases[i].pass, Pass::forward);
    EXPECT_EQ(forward.cases[i].plan_index, before.cases[i].plan_index);
    EXPECT_TRUE(forward.cases[i].same_measurement(before.cases[i])) << forward.cases[i].label();
  }
  // A forward's label reads as it always did; other passes are named at its end.
  EXPECT_EQ(before.cases[0].label(), "naive 1x4x64x32 bf16 causal");
}

TEST(Plan, PassesVaryFastestSoAVariantsPassesAreAdjacent) {
  const Plan forward = plan_of(kTwoVariants);
  const Plan plan = plan_of(std::string(kTwoVariants) + "passes: [forward, backward, forward_backward]\n");
  ASSERT_EQ(plan.cases.size(), 3 * forward.cases.size());
  std::set<std::string> labels;
  for (std::size_t i = 0; i < plan.cases.size(); ++i) {
    const Case& c = plan.cases[i];
    EXPECT_EQ(c.plan_index, static_cast<int>(i));
    EXPECT_EQ(c.pass, (std::vector<Pass>{Pass::forward, Pass::backward, Pass::forward_backward})[i % 3]);
    // The passes of one case of the forward-only plan, in the order written.
    const Case& base = forward.cases[i / 3];
    EXPECT_EQ(c.variant, base.variant);
    EXPECT_EQ(c.shape, base.shape);
    EXPECT_EQ(c.dtype, base.dtype);
    EXPECT_EQ(c.mask, base.mask);
    EXPECT_EQ(c.same_measurement(base), c.pass == Pass::forward);
    labels.insert(c.label());
  }
  EXPECT_EQ(labels.size(), plan.cases.size());
  EXPECT_EQ(plan.cases[1].label(), "naive 1x4x64x32 bf16 causal backward");
  EXPECT_EQ(plan.cases[5].label(), "sdpa_flash 1x4x64x32 bf16 causal forward_backward");
}

TEST(Plan, ExcludeRulesMatchThePassAndDuplicatesCountEveryPass) {
  const Plan plan = plan_of(std::string(kTwoVariants) + R"(passes: [forward, backward]
exclude:
  - {variant: sdpa_flash, pass: backward}
  - {dtype: fp32, pass: [backward, forward_backward]}
)");
  // 16 forwards; backwards of naive bf16 only: 2 batches x 2 masks.
  ASSERT_EQ(plan.cases.size(), 16u + 4);
  EXPECT_EQ(plan.excluded, 12);
  for (const Case& c : plan.cases) {
    if (c.pass == Pass::backward) EXPECT_TRUE(c.variant == "naive" && c.dtype == Dtype::bf16) << c.label();
  }
  const Plan twice = plan_of(R"(
variants: [naive]
dtypes: [bf16]
passes: [forward, backward]
shapes: [{batch: 1, heads: 4, seq_len: 64, head_dim: 32}, {batch: 1, heads: 4, seq_len: 64, head_dim: 32}]
)");
  EXPECT_EQ(twice.cases.size(), 2u);
  EXPECT_EQ(twice.duplicates, 2);
}

TEST(Plan, ShippedQuickstartCoversGqaAndDecoding) {
  const Plan plan = make_plan(load_config(ATTNSWEEP_SOURCE_DIR "/configs/quickstart.yaml"));
  EXPECT_EQ(plan.cases.size(), 42u);
  EXPECT_EQ(plan.excluded, 42);
  bool decoding = false;
  for (const auto& c : plan.cases) decoding |= c.shape.seq_len_q == 1 && c.shape.kv_heads == 2 && !c.mask.is_causal();
  EXPECT_TRUE(decoding);
}

// Every config shipped in configs/ loads and plans (a config the docs point at must not rot).
TEST(Plan, EveryShippedConfigLoadsAndPlans) {
  int configs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(ATTNSWEEP_SOURCE_DIR "/configs")) {
    if (entry.path().extension() != ".yaml") continue;
    ++configs;
    const Plan plan = make_plan(load_config(entry.path().string()));
    EXPECT_FALSE(plan.cases.empty()) << entry.path();
  }
  EXPECT_GE(configs, 6);  // quickstart, bench, blog, nightly, scale_out, training
}

// So does every config of bench/ and proofs/ (the device proofs' sweeps, one folder per proof):
// proofs/score-mods/score_mods_device.yaml was first sent to the GPU with a zip row short of a key
// and refused there.
TEST(Plan, EveryBenchAndProofConfigLoadsAndPlans) {
  int configs = 0;
  for (const char* folder : {ATTNSWEEP_SOURCE_DIR "/bench", ATTNSWEEP_SOURCE_DIR "/proofs"}) {
    for (const auto& entry : std::filesystem::recursive_directory_iterator(folder)) {
      if (entry.path().extension() != ".yaml") continue;
      ++configs;
      const Plan plan = make_plan(load_config(entry.path().string()));
      EXPECT_FALSE(plan.cases.empty()) << entry.path();
    }
  }
  EXPECT_GE(configs, 20);
}

// configs/training.yaml (issue 23): the study's shape, two long-sequence shapes and
// a GQA one, bf16 and fp16, every built-in variant, all three passes, causal; the
// score-materialising variants left out at 8192 tokens; a few minutes on an H200.
TEST(Plan, ShippedTrainingConfigHasEveryPassOfEveryVariant) {
  const Config config = load_config(ATTNSWEEP_SOURCE_DIR "/configs/training.yaml");
  EXPECT_EQ(config.passes, (std::vector<Pass>{Pass::forward, Pass::backward, Pass::forward_backward}));
  EXPECT_EQ(config.dtypes, (std::vector<Dtype>{Dtype::bf16, Dtype::fp16}));
  EXPECT_EQ(config.masks, std::vector<Mask>{Mask(true)});
  EXPECT_EQ(config.variants.size(), 7u);
  const Plan plan = make_plan(config);
  EXPECT_EQ(plan.cases.size(), 150u);  // 4 shapes x 2 dtypes x 7 variants x 3 passes, less 3 x 2 x 3 at 8192
  EXPECT_EQ(plan.excluded, 18);
  std::map<std::tuple<std::string, std::string, Dtype>, std::set<Pass>> passes;
  std::set<std::string> shapes;
  for (const Case& c : plan.cases) {
    passes[{c.variant, c.shape.label(), c.dtype}].insert(c.pass);
    shapes.insert(c.shape.label());
    EXPECT_TRUE(c.mask.is_causal());
    if (c.shape.seq_len_kv == 8192) {
      EXPECT_TRUE(c.variant != "naive" && c.variant != "naive_inplace" && c.variant != "sdpa_math") << c.label();
    }
  }
  for (const auto& [key, found] : passes) EXPECT_EQ(found.size(), 3u) << std::get<0>(key) << " " << std::get<1>(key);
  EXPECT_EQ(passes.size(), 50u);
  EXPECT_EQ(shapes, (std::set<std::string>{Shape{8, 16, 16, 1024, 1024, 64}.label(), Shape{2, 16, 16, 4096, 4096, 128}.label(),
                                           Shape{1, 32, 32, 8192, 8192, 128}.label(), Shape{2, 32, 8, 4096, 4096, 128}.label()}));
  // The cost model's time of the whole sweep on one H200: a few minutes.
  const double minutes = static_cast<double>(expected_plan_ns(plan, config.measure)) / 60e9;
  EXPECT_GT(minutes, 1);
  EXPECT_LT(minutes, 5);
}

}  // namespace
}  // namespace attnsweep
