// fp8 end to end on the CPU (issue 36): `dtypes: [fp8_e4m3, fp8_e5m2]` quantise
// the seeded bf16 draw per tensor; naive and naive_inplace emulate fp8
// (dequantise, then bf16), an op library reads the fp8 tensors with the
// descales its mapping hands it (tests/support/flash_like_op.cpp takes
// FlashAttention-3's q_descale, k_descale, v_descale), SDPA refuses with the
// reason. rel_error is against float64 of the bf16 draw (the quantisation's
// error is in it), rel_error_dequantized against float64 of the dequantised
// inputs (the kernel's own): the op computes in float32 from the dequantised
// values, so its own error is bf16's output rounding alone, and an op that
// ignored its descales would be off by orders of magnitude.
#include <gtest/gtest.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include <string>

#include "tests/support/cli_output_checks.hpp"
#include "tests/support/cli_test.hpp"
#include "tests/support/flash_like_variant.hpp"

namespace {

using attnsweep::testing::contains;
using attnsweep::testing::flash_like;
using attnsweep::testing::Outcome;
const auto text = attnsweep::testing::rows_text;

const char* const kDescales = "    arguments: {q_descale: descale_q, k_descale: descale_k, v_descale: descale_v}\n";

std::string config(const std::string& dtypes, const std::string& passes = "[forward]") {
  return "name: fp8\n"
         "device: cpu\n"
         "variants:\n"
         "  - naive\n  - naive_inplace\n  - sdpa_math\n" +
         flash_like("fa3_like", kDescales) + flash_like("fa3_plain", "") +
         "dtypes: " + dtypes + "\n"
         "causal: [true, false]\n"
         "passes: " + passes + "\n"
         "shapes: {batch: 2, heads: 4, kv_heads: 2, seq_len: 48, head_dim: 16}\n"
         "measure: {warmup: 1, profiled_forwards: 1, min_samples: 3, max_samples: 3}\n";
}

class CliFp8 : public attnsweep::testing::CliSweepTest {
 protected:
  CliFp8() : CliSweepTest("attnsweep-cli-fp8") {}
};

TEST_F(CliFp8, NaiveEmulatesAnOpReadsTheDescalesAndSdpaSaysWhyNot) {
  const Outcome outcome = run(config("[fp8_e4m3, fp8_e5m2, bf16]"));
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  SQLite::Database db(path("r.db"), SQLite::OPEN_READONLY);
  EXPECT_EQ(text(db, "SELECT dtype, variant, status, ifnull(numerics, '-'), count(*) FROM cases GROUP BY 1, 2, 3, 4 "
                     "ORDER BY 1, 2"),
            "bf16|fa3_like|ok|ok|2\nbf16|fa3_plain|ok|ok|2\nbf16|naive|ok|ok|2\nbf16|naive_inplace|ok|ok|2\n"
            "bf16|sdpa_math|ok|ok|2\n"
            "fp8_e4m3|fa3_like|ok|ok|2\nfp8_e4m3|fa3_plain|unsupported|-|2\nfp8_e4m3|naive|ok|ok|2\n"
            "fp8_e4m3|naive_inplace|ok|ok|2\nfp8_e4m3|sdpa_math|unsupported|-|2\n"
            "fp8_e5m2|fa3_like|ok|ok|2\nfp8_e5m2|fa3_plain|unsupported|-|2\nfp8_e5m2|naive|ok|ok|2\n"
            "fp8_e5m2|naive_inplace|ok|ok|2\nfp8_e5m2|sdpa_math|unsupported|-|2\n");
  // The quantisation's error: e5m2 (2 mantissa bits) about twice e4m3's (3 bits), both far above bf16's.
  const auto worst = [&](const std::string& dtype, const std::string& column) {
    return db.execAndGet("SELECT max(" + column + ") FROM cases WHERE status = 'ok' AND dtype = '" + dtype + "'")
        .getDouble();
  };
  const auto least = [&](const std::string& dtype, const std::string& column) {
    return db.execAndGet("SELECT min(" + column + ") FROM cases WHERE status = 'ok' AND dtype = '" + dtype + "'")
        .getDouble();
  };
  EXPECT_GT(least("fp8_e4m3", "rel_error"), 5 * worst("bf16", "rel_error"));
  EXPECT_LT(worst("fp8_e4m3", "rel_error"), 0.1);
  EXPECT_GT(least("fp8_e5m2", "rel_error"), worst("fp8_e4m3", "rel_error"));
  EXPECT_LT(worst("fp8_e5m2", "rel_error"), 0.2);
  // The kernel's own error is far below the quantisation's: the op's float32 math leaves bf16's output rounding.
  EXPECT_LT(db.execAndGet("SELECT max(rel_error_dequantized) FROM cases WHERE variant = 'fa3_like' AND "
                          "dtype LIKE 'fp8%'").getDouble(),
            5e-3);
  EXPECT_EQ(text(db, "SELECT count(*) FROM cases WHERE status = 'ok' AND dtype LIKE 'fp8%' AND "
                     "rel_error_dequantized * 4 > rel_error"),
            "0\n");
  EXPECT_EQ(text(db, "SELECT count(*) FROM cases WHERE dtype = 'bf16' AND rel_error_dequantized IS NOT NULL"), "0\n");
  EXPECT_EQ(text(db, "SELECT DISTINCT numerics_bound FROM cases WHERE dtype LIKE 'fp8%' AND status = 'ok' ORDER BY 1"),
            "0.1\n0.2\n");
  // Why not, in the library's words or the mapping's.
  EXPECT_TRUE(contains(db.execAndGet("SELECT DISTINCT error_message FROM cases WHERE variant = 'sdpa_math' AND "
                                     "dtype = 'fp8_e4m3'").getString(),
                       "fp8 inputs: scaled_dot_product_attention takes no fp8 tensors and no descales"));
  EXPECT_TRUE(contains(db.execAndGet("SELECT DISTINCT error_message FROM cases WHERE variant = 'fa3_plain' AND "
                                     "dtype = 'fp8_e5m2'").getString(),
                       "fp8: the variant's arguments: mapping gives the op no descale_q, descale_k and descale_v"));
  // min_bytes: q, k and v at 1 byte, the output at bf16's 2 (2x4x48x16 q and output, 2x2x48x16 k and v).
  EXPECT_EQ(text(db, "SELECT DISTINCT CAST(min_bytes AS INTEGER) FROM cases WHERE dtype = 'fp8_e4m3'"),
            std::to_string(1 * (2 * 4 * 48 * 16 + 2 * 2 * 2 * 48 * 16) + 2 * (2 * 4 * 48 * 16)) + "\n");
  EXPECT_TRUE(contains(db.execAndGet("SELECT flop_convention FROM runs").getString(),
                       "fp8 (fp8_e4m3, fp8_e5m2): flops as any dtype; min_bytes count q, k and v at 1 byte"));
  EXPECT_TRUE(contains(outcome.output, "2x4/2x48x16  fp8_e5m2  full    unsupported")) << outcome.output;
}

TEST_F(CliFp8, ABackwardIsUnsupportedAndPlanSaysSoFirst) {
  const Outcome plan = run_config("plan", "s.yaml", config("[fp8_e4m3]", "[forward, backward]"), "");
  ASSERT_EQ(plan.exit_code, 0) << plan.output;
  std::size_t notes = 0;
  for (std::size_t at = plan.output.find("unsupported: fp8 cases are forward only"); at != std::string::npos;
       at = plan.output.find("unsupported: fp8 cases are forward only", at + 1)) {
    ++notes;
  }
  EXPECT_EQ(notes, 10u) << plan.output;  // 5 variants x 2 masks
  SQLite::Database db = swept(config("[fp8_e4m3]", "[forward, backward]"));
  EXPECT_EQ(text(db, "SELECT DISTINCT status, error_message FROM cases WHERE pass = 'backward'"),
            "unsupported|fp8 cases are measured forward only (FlashAttention-3's fp8 path is a forward; naive's "
            "emulation is of the forward)\n");
}

TEST_F(CliFp8, AnUnknownDtypeNamesTheFp8Ones) {
  const Outcome outcome = run(config("[fp8]"));
  EXPECT_EQ(outcome.exit_code, 2) << outcome.output;
  EXPECT_TRUE(contains(outcome.output, "dtypes: unknown value 'fp8'; did you mean 'fp8_e4m3'? Allowed: bf16, fp16, fp32, fp8_e4m3, "
                                       "fp8_e5m2"))
      << outcome.output;
}

}  // namespace
