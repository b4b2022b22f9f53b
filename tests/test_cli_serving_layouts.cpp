// Issue 25 end to end on the CPU: variable-length batches and paged KV caches,
// swept through every built-in variant and through an op library with
// FlashAttention-3's calling convention (tests/support/flash_like_op.cpp) whose
// mapping hands it the generated tensors by argument name. The op computes each
// sequence on its own from what it is given, so a wrong cu_seqlens, page table
// or length shows as a wrong output, which the float64 reference catches.
#include <gtest/gtest.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include <filesystem>
#include <string>

#include "tests/support/cli_output_checks.hpp"
#include "tests/support/cli_test.hpp"
#include "tests/support/flash_like_variant.hpp"

namespace {

using attnsweep::testing::contains;
using attnsweep::testing::flash_like;
using attnsweep::testing::Outcome;
const auto text = attnsweep::testing::rows_text;

const char* const kEveryArgument =
    "    arguments: {cu_seqlens_q: cu_seqlens_q, cu_seqlens_k: cu_seqlens_k, max_seqlen_q: max_seqlen_q,\n"
    "                max_seqlen_k: max_seqlen_k, page_table: page_table, seqused_k: seqused_k,\n"
    "                window_size_left: window_left, window_size_right: window_right}\n";

// Decoding 3 tokens over caches of 5, 40 and 17 keys (GQA 4/2), uniform decoding
// of 2 tokens over 33 keys; each contiguous and in pages of 8 keys; causal
// bottom right without and with a window of 6 keys back.
std::string config(const std::string& variants) {
  return "name: serving-layouts\n"
         "device: cpu\n"
         "variants:\n" + variants +
         "dtypes: [fp32]\n"
         "causal: bottom_right\n"
         "window: [none, {left: 6}]\n"
         "shapes:\n"
         "  - heads: 4\n"
         "    kv_heads: 2\n"
         "    head_dim: 16\n"
         "    varlen: {seq_len_kv: [5, 40, 17], seq_len_q: 3}\n"
         "    page_size: [0, 8]\n"
         "  - {batch: 2, heads: 4, kv_heads: 2, seq_len_q: 2, seq_len_kv: 33, head_dim: 16, page_size: [0, 8]}\n"
         "measure: {warmup: 1, profiled_forwards: 1, min_samples: 3, max_samples: 3}\n";
}

class CliServingLayouts : public attnsweep::testing::CliSweepTest {
 protected:
  CliServingLayouts() : CliSweepTest("attnsweep-cli-serving-layouts") {}
};

TEST_F(CliServingLayouts, EveryBuiltInVariantRunsAVariableLengthBatchRightAndNoneReadsPages) {
  const Outcome outcome = run(config("  - naive\n  - naive_inplace\n  - sdpa_math\n  - sdpa_flash\n  - sdpa_auto\n"));
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  SQLite::Database db(path("r.db"), SQLite::OPEN_READONLY);
  // 2 shapes x 2 page sizes x 2 masks x 5 variants; the 20 contiguous ones run, every paged one is refused.
  EXPECT_EQ(text(db, "SELECT page_size, status, count(*) FROM cases GROUP BY 1, 2"), "0|ok|20\n8|unsupported|20\n");
  EXPECT_LT(db.execAndGet("SELECT max(rel_error) FROM cases WHERE status = 'ok'").getDouble(), 1e-5);
  EXPECT_TRUE(contains(db.execAndGet("SELECT DISTINCT error_message FROM cases WHERE page_size = 8").getString(),
                       "a paged KV cache: PyTorch's attention has no entry point that reads one"));
  // The lengths, the tokens that are not padding, and the label of the batch.
  EXPECT_EQ(text(db, "SELECT DISTINCT batch, seq_len_q, seq_len_kv, seq_lens_q, seq_lens_kv, query_tokens FROM cases "
                     "ORDER BY batch DESC"),
            "3|3|40|3,3,3|5,40,17|9\n2|2|33|NULL|NULL|4\n");
  EXPECT_TRUE(contains(outcome.output, "3x4/2xvarlen[q 3, kv 5-40 #6d46be8cb8d2]x16 paged8 "));
  EXPECT_DOUBLE_EQ(db.execAndGet("SELECT min(abs(tokens_per_s * time_us_median * 1e-6 - query_tokens)) FROM results "
                                 "WHERE status = 'ok' AND seq_lens_q IS NOT NULL").getDouble(), 0.0);
  // FLOPs of the real pairs, sequence by sequence: rows see 3..5, 38..40 and 15..17 keys bottom right.
  EXPECT_DOUBLE_EQ(db.execAndGet("SELECT DISTINCT flops FROM cases WHERE seq_lens_q IS NOT NULL AND window_left IS NULL "
                                 "AND status = 'ok'").getDouble(),
                   4.0 * 4 * 16 * ((3 + 4 + 5) + (38 + 39 + 40) + (15 + 16 + 17)));
}

TEST_F(CliServingLayouts, AnOpGivenTheGeneratedArgumentsReadsPackedRowsPagesAndWindowsRight) {
  SQLite::Database db = swept(config("  - sdpa_math\n" + flash_like("fa3_like", kEveryArgument)));
  // Every layout and mask: 2 shapes x 2 page sizes x 2 masks.
  EXPECT_EQ(text(db, "SELECT status, numerics, count(*) FROM cases WHERE variant = 'fa3_like' GROUP BY 1, 2"), "ok|ok|8\n");
  EXPECT_LT(db.execAndGet("SELECT max(rel_error) FROM cases WHERE variant = 'fa3_like'").getDouble(), 1e-5);
  // Its errors are sdpa_math's (the same sequences, the same float64 reference) where both ran.
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM cases a JOIN cases b ON a.seq_len_kv = b.seq_len_kv "
                          "AND ifnull(a.window_left, -1) = ifnull(b.window_left, -1) AND b.page_size = 0 "
                          "WHERE a.variant = 'fa3_like' AND b.variant = 'sdpa_math' AND b.status = 'ok' "
                          "AND abs(a.rel_error - b.rel_error) > 1e-6").getInt(), 0);
}

TEST_F(CliServingLayouts, AnOpWithoutTheArgumentsIsUnsupportedSayingWhatIsMissing) {
  const Outcome outcome = run(config(flash_like("bare", "") +
                                     flash_like("no_pages", "    arguments: {cu_seqlens_q: cu_seqlens_q, cu_seqlens_k: "
                                                            "cu_seqlens_k, max_seqlen_q: max_seqlen_q, max_seqlen_k: "
                                                            "max_seqlen_k}\n")));
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  SQLite::Database db(path("r.db"), SQLite::OPEN_READONLY);
  // bare runs the uniform contiguous unwindowed case alone; no_pages the variable-length one too.
  EXPECT_EQ(text(db, "SELECT variant, status, count(*) FROM cases GROUP BY 1, 2"),
            "bare|ok|1\nbare|unsupported|7\nno_pages|ok|2\nno_pages|unsupported|6\n");
  EXPECT_EQ(db.execAndGet("SELECT error_message FROM cases WHERE variant = 'bare' AND seq_lens_q IS NOT NULL AND "
                          "page_size = 0 AND window_left IS NULL").getString(),
            "a variable-length batch: the variant's arguments: mapping gives the op no cu_seqlens_q, max_seqlen_q, "
            "cu_seqlens_k, max_seqlen_k (docs/op-libraries.md)");
  EXPECT_EQ(db.execAndGet("SELECT error_message FROM cases WHERE variant = 'no_pages' AND seq_lens_q IS NOT NULL AND "
                          "page_size = 8 AND window_left IS NULL").getString(),
            "a paged KV cache: the variant's arguments: mapping gives the op no page_table, seqused_k "
            "(docs/op-libraries.md)");
  EXPECT_EQ(db.execAndGet("SELECT error_message FROM cases WHERE variant = 'no_pages' AND seq_lens_q IS NULL AND "
                          "page_size = 0 AND window_left = 6").getString(),
            "the mask 'causal_bottom_right window[6,0]' cannot be passed: the variant's arguments: mapping gives the "
            "op no window_left and window_right");
}

TEST_F(CliServingLayouts, ABackwardOfAPagedCacheIsUnsupportedAndABadMappingIsRefused) {
  std::string yaml = config("  - sdpa_math\n");
  yaml.replace(yaml.find("dtypes:"), 0, "passes: [forward, backward]\n");
  // plan says beforehand what run will find unsupported: of 16 cases, the 4 backward passes of a
  // paged case and the 4 forward passes on pages (a variable-length batch has its backward).
  const Outcome plan = run_config("plan", "p.yaml", yaml, "");
  ASSERT_EQ(plan.exit_code, 0) << plan.output;
  const auto count = [&](const std::string& part) {
    std::size_t found = 0;
    for (std::size_t at = plan.output.find(part); at != std::string::npos; at = plan.output.find(part, at + 1)) ++found;
    return found;
  };
  EXPECT_EQ(count("backward  unsupported: paged cases are forward only\n"), 4u) << plan.output;
  EXPECT_EQ(count("forward   unsupported: no built-in variant reads pages\n"), 4u) << plan.output;
  EXPECT_EQ(count("unsupported"), 8u) << plan.output;
  SQLite::Database db = swept(yaml);
  EXPECT_EQ(text(db, "SELECT pass, status, count(*) FROM cases WHERE page_size = 0 GROUP BY 1, 2"),
            "backward|ok|4\nforward|ok|4\n");
  EXPECT_EQ(text(db, "SELECT DISTINCT error_message FROM cases WHERE pass = 'backward' AND page_size > 0"),
            "paged KV caches are measured forward only (serving); their backward is not timed\n");

  const Outcome unknown = run(config(flash_like("fa3_like", "    arguments: {page_table: pages}\n")));
  EXPECT_EQ(unknown.exit_code, 2) << unknown.output;
  EXPECT_TRUE(contains(unknown.output, "variants[0].arguments.page_table: unknown value 'pages'; allowed: cu_seqlens_q, "
                                       "cu_seqlens_k, max_seqlen_q, max_seqlen_k, seqused_k, page_table, window_left, "
                                       "window_right")) << unknown.output;
  const Outcome wrong_type = run(config(flash_like("fa3_like", "    arguments: {is_causal: page_table}\n")));
  EXPECT_EQ(wrong_type.exit_code, 2) << wrong_type.output;
  EXPECT_TRUE(contains(wrong_type.output, "is mapped by causal or scale already")) << wrong_type.output;
  const Outcome not_an_int = run(config(flash_like("fa3_like", "    arguments: {max_seqlen_q: page_table}\n")));
  EXPECT_EQ(not_an_int.exit_code, 2) << not_an_int.output;
  EXPECT_TRUE(contains(not_an_int.output, "arguments.max_seqlen_q: argument 'max_seqlen_q' of")) << not_an_int.output;
  EXPECT_TRUE(contains(not_an_int.output, "is not a Tensor")) << not_an_int.output;
  // window_size_left is an int without a None: a generated value that may be None cannot go there.
  const Outcome not_optional = run(config(flash_like("fa3_like", "    arguments: {window_size_left: max_seqlen_q}\n")));
  EXPECT_EQ(not_optional.exit_code, 2) << not_optional.output;
  EXPECT_TRUE(contains(not_optional.output, "arguments.window_size_left: argument 'window_size_left' of "))
      << not_optional.output;
  EXPECT_TRUE(contains(not_optional.output, "is not optional (int?): attnsweep passes None where a case has no "
                                            "max_seqlen_q")) << not_optional.output;
  const Outcome not_a_mapping = run(config(flash_like("fa3_like", "    arguments: [page_table, seqused_k]\n")));
  EXPECT_EQ(not_a_mapping.exit_code, 2) << not_a_mapping.output;
  EXPECT_TRUE(contains(not_a_mapping.output, "s.yaml:12:16: variants[0].arguments: expected a mapping of the op's "
                                             "argument names to what attnsweep makes")) << not_a_mapping.output;
  const Outcome twice = run(config(flash_like("fa3_like", "    arguments: {page_table: page_table, seqused_k: page_table}\n")));
  EXPECT_EQ(twice.exit_code, 2) << twice.output;
  EXPECT_TRUE(contains(twice.output, "variants[0].arguments.seqused_k: page_table is given to 'page_table' already"))
      << twice.output;
  std::string sideways = flash_like("fa3_like", "");
  sideways.replace(sideways.find("bottom_right"), 12, "'sideways; rm -rf /'");
  const Outcome alignment = run(config(sideways));
  EXPECT_EQ(alignment.exit_code, 2) << alignment.output;
  EXPECT_TRUE(contains(alignment.output, "variants[0].causal_alignment: unknown alignment 'sideways; rm -rf /'; "
                                         "allowed: top_left (PyTorch's is_causal), bottom_right")) << alignment.output;
  // None of the refused configs stored a run: the database holds the first run alone.
  SQLite::Database after(path("r.db"), SQLite::OPEN_READONLY);
  EXPECT_EQ(after.execAndGet("SELECT count(*) FROM runs").getInt(), 1);
}

// The memory check counts what a variable-length case makes: here the real
// rows are a few GiB, but the padded batch's masks are 2 x 2 x 16M x 16M bytes.
TEST_F(CliServingLayouts, AVariableLengthCaseWhosePaddedMasksCannotFitIsRefusedBeforeAnythingRuns) {
  const std::string yaml = "variants: [naive]\n"
                           "device: cpu\n"
                           "dtypes: [fp32]\n"
                           "causal: false\n"
                           "shapes:\n"
                           "  - {heads: 1, head_dim: 8, varlen: {seq_len_kv: [16777216, 1], seq_len_q: seq_len_kv}}\n";
  for (const std::string verb : {"plan", "run"}) {
    const Outcome outcome = run_config(verb, "big.yaml", yaml, "big.db");
    EXPECT_EQ(outcome.exit_code, 2) << verb << ": " << outcome.output;
    EXPECT_TRUE(contains(outcome.output, "big.yaml:6:5: shapes: case naive 2x1xvarlen[q 1-16777216, kv 1-16777216 #"))
        << outcome.output;
    EXPECT_TRUE(contains(outcome.output, "GiB for its inputs as laid out (q, k, v and the output padded to the longest "
                                         "sequence, the packed rows and masks, the pages); cpu has "))
        << outcome.output;
  }
  EXPECT_FALSE(std::filesystem::exists(path("big.db")));
}

// Issue 36: a variable-length batch's backward. The padded variants are
// differentiated with respect to the padded inputs; an op that reads the packed
// rows (attnsweep_flash_like::fwd_trainable: autograd through its ATen ops) with
// respect to the packed rows, with the upstream gradient's real rows packed. Both
// are checked against float64 autograd per sequence: the padding rows of the
// upstream gradient are zero, else the padded reference would give key 0 of every
// sequence a gradient that the packed op rightly does not.
TEST_F(CliServingLayouts, AVariableLengthBatchsBackwardRunsPaddedAndPackedAndIsRightPerSequence) {
  std::string packed_op = flash_like("packed_op", kEveryArgument);
  packed_op.replace(packed_op.find("::fwd\n"), 6, "::fwd_trainable\n");
  std::string yaml = config("  - naive\n  - sdpa_math\n" + packed_op);
  yaml.replace(yaml.find("dtypes:"), 0, "passes: [backward, forward_backward]\n");
  // Training's packed prefill: each sequence's queries are its keys, so the padded batch has padding query rows.
  yaml.replace(yaml.find("seq_len_q: 3}"), 13, "seq_len_q: seq_len_kv}");
  SQLite::Database db = swept(yaml);
  EXPECT_EQ(text(db, "SELECT DISTINCT seq_lens_q FROM cases WHERE seq_lens_q IS NOT NULL"), "5,40,17\n");
  // 3 variants x 2 masks x 2 passes on the contiguous variable-length batch, all measured and right.
  EXPECT_EQ(text(db, "SELECT variant, status, numerics, count(*) FROM cases WHERE seq_lens_q IS NOT NULL AND "
                     "page_size = 0 GROUP BY 1, 2, 3"),
            "naive|ok|ok|4\npacked_op|ok|ok|4\nsdpa_math|ok|ok|4\n");
  EXPECT_LT(db.execAndGet("SELECT max(max(grad_rel_error_q, grad_rel_error_k, grad_rel_error_v)) FROM cases WHERE "
                          "seq_lens_q IS NOT NULL AND page_size = 0").getDouble(),
            1e-5);
  EXPECT_GT(db.execAndGet("SELECT min(grad_rel_error_v) FROM cases WHERE status = 'ok'").getDouble(), 0.0);
  // The op's output is packed: had its backward been asked for the padded inputs, autograd would
  // have refused (they are not in its graph) and the case would be an error.
  // Paged caches stay forward only, for every variant.
  EXPECT_EQ(text(db, "SELECT status, count(*) FROM cases WHERE page_size > 0 GROUP BY 1"), "unsupported|24\n");
}

}  // namespace
