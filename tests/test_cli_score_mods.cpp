// ALiBi and attention sinks end to end on the CPU (issue 36): `alibi` and
// `sinks` are axes like `causal` (true, false or both): crossed with the masks
// and softcaps, in the label, the store and compare's key; naive and
// naive_inplace compute both, SDPA takes ALiBi as its float attn_mask and refuses
// sinks with the reason, and an op library gets them through its mapping
// (tests/support/flash_like_op.cpp takes FlashAttention's `alibi_slopes` and a
// sink logit per head as `s_aux`, vLLM's name). ALiBi's slopes (1/2 .. 1/16 at 4
// heads) over 48 keys and sinks drawn from N(0, 1) change the output by far more
// than the numerics allow, so a variant that ignored either would fail its check.
#include <gtest/gtest.h>

#include <SQLiteCpp/SQLiteCpp.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <string>
#include <utility>

#include "tests/support/cli_output_checks.hpp"
#include "tests/support/cli_test.hpp"
#include "tests/support/flash_like_variant.hpp"

namespace {

using attnsweep::testing::contains;
using attnsweep::testing::flash_like;
using attnsweep::testing::Outcome;
const auto text = attnsweep::testing::rows_text;

std::string config(const std::string& alibi, const std::string& sinks, const std::string& passes = "[forward]",
                   const std::string& causal = "[true, false]") {
  return "name: score-mods\n"
         "device: cpu\n"
         "variants:\n"
         "  - naive\n  - naive_inplace\n  - sdpa_math\n  - sdpa_auto\n" +
         flash_like("fa3_like", "    arguments: {alibi_slopes: alibi_slopes, s_aux: sinks}\n") +
         flash_like("fa3_plain", "") +
         "dtypes: [fp32]\n"
         "causal: " + causal + "\n"
         "alibi: " + alibi + "\n"
         "sinks: " + sinks + "\n"
         "passes: " + passes + "\n"
         "shapes: {batch: 2, heads: 4, kv_heads: 2, seq_len: 48, head_dim: 16}\n"
         "measure: {warmup: 1, profiled_forwards: 1, min_samples: 3, max_samples: 3}\n";
}

class CliScoreMods : public attnsweep::testing::CliSweepTest {
 protected:
  CliScoreMods() : CliSweepTest("attnsweep-cli-score-mods") {}
};

TEST_F(CliScoreMods, NaiveSdpaAndAnOpWithTheArgumentsComputeThemAndTheRestSayWhyNot) {
  const Outcome outcome = run(config("[false, true]", "[false, true]"));
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  SQLite::Database db(path("r.db"), SQLite::OPEN_READONLY);
  // 2 masks x 4 modifications x 6 variants, each (mask, alibi, sinks) once.
  EXPECT_EQ(text(db, "SELECT alibi, sinks, status, count(*) FROM cases GROUP BY 1, 2, 3 ORDER BY 1, 2, 3"),
            "0|0|ok|12\n"
            "0|1|ok|6\n0|1|unsupported|6\n"      // sinks: naive, naive_inplace, fa3_like
            "1|0|ok|10\n1|0|unsupported|2\n"     // ALiBi: all but fa3_plain
            "1|1|ok|6\n1|1|unsupported|6\n");
  EXPECT_EQ(text(db, "SELECT DISTINCT variant FROM cases WHERE alibi = 1 AND sinks = 0 AND status = 'ok' ORDER BY 1"),
            "fa3_like\nnaive\nnaive_inplace\nsdpa_auto\nsdpa_math\n");
  // Every case that ran matches the float64 reference of the modified attention.
  EXPECT_LT(db.execAndGet("SELECT max(rel_error) FROM cases WHERE status = 'ok'").getDouble(), 1e-5);
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM cases WHERE status = 'ok' AND numerics = 'ok'").getInt(), 34);
  // At 48 keys in fp32 each modification moves the output far past the bound: no case says it could not tell.
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM cases WHERE warnings LIKE '%cannot tell%'").getInt(), 0);
  EXPECT_TRUE(contains(db.execAndGet("SELECT DISTINCT error_message FROM cases WHERE variant = 'sdpa_math' AND "
                                     "sinks = 1").getString(),
                       "attention sinks: scaled_dot_product_attention's softmax has no per-head sink logit"));
  EXPECT_EQ(db.execAndGet("SELECT DISTINCT error_message FROM cases WHERE variant = 'fa3_plain' AND alibi = 1 AND "
                          "sinks = 0").getString(),
            "ALiBi: the variant's arguments: mapping gives the op no alibi_slopes (FlashAttention's float32 slopes, "
            "one per query head; docs/op-libraries.md)");
  // The results view has the columns, the labels and the summary the modifications.
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM results WHERE alibi = 1 AND sinks = 1").getInt(), 12);
  EXPECT_TRUE(contains(outcome.output, "causal alibi sinks")) << outcome.output;
  EXPECT_TRUE(contains(db.execAndGet("SELECT flop_convention FROM runs").getString(), "ALiBi adds no flops"));
  // The modified outputs are not the plain ones: the same variant's errors differ.
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM cases a JOIN cases b ON a.variant = b.variant AND a.causal = b.causal "
                          "WHERE (a.alibi = 1 OR a.sinks = 1) AND b.alibi = 0 AND b.sinks = 0 AND a.status = 'ok' "
                          "AND a.rel_error = b.rel_error").getInt(),
            0);
}

// One sink among 2048 keys in bf16 moves the output less than bf16's bound: a
// variant that ignored it would pass, and the case says so; ALiBi's slopes move
// the same output far past the bound, and its case says nothing.
TEST_F(CliScoreMods, ACaseWhoseModificationTheNumericsCannotSeeSaysSo) {
  const std::string yaml = "name: unseen\ndevice: cpu\nvariants: [naive]\ndtypes: [bf16]\ncausal: false\n"
                           "alibi: [false, true]\nsinks: true\n"
                           "shapes: {batch: 1, heads: 2, seq_len_q: 16, seq_len_kv: 2048, head_dim: 16}\n"
                           "measure: {warmup: 1, profiled_forwards: 1, min_samples: 3, max_samples: 3}\n";
  SQLite::Database db = swept(yaml);
  EXPECT_EQ(text(db, "SELECT alibi, numerics, ifnull(warnings, '') LIKE '%numerics cannot tell that sinks was applied%' FROM cases "
                     "ORDER BY plan_index"),
            "0|ok|1\n1|ok|0\n");
  EXPECT_TRUE(contains(db.execAndGet("SELECT warnings FROM cases WHERE alibi = 0").getString(),
                       "a variant that ignored it would pass"));
}

TEST_F(CliScoreMods, TheBackwardOfNaiveAndSdpaMathIsCheckedAgainstFloat64Autograd) {
  SQLite::Database db = swept(config("true", "[false, true]", "[backward]", "true"));
  EXPECT_EQ(text(db, "SELECT variant, sinks, status FROM cases WHERE variant IN ('naive', 'naive_inplace', 'sdpa_math') "
                     "ORDER BY 2, 1"),
            "naive|0|ok\nnaive_inplace|0|ok\nsdpa_math|0|ok\nnaive|1|ok\nnaive_inplace|1|ok\nsdpa_math|1|unsupported\n");
  EXPECT_LT(db.execAndGet("SELECT max(max(grad_rel_error_q, grad_rel_error_k, grad_rel_error_v)) FROM cases "
                          "WHERE status = 'ok'").getDouble(),
            1e-5);
  EXPECT_GT(db.execAndGet("SELECT min(grad_rel_error_q) FROM cases WHERE status = 'ok'").getDouble(), 0.0);
}

TEST_F(CliScoreMods, CompareMatchesCasesByThemAndItsJsonSaysIt) {
  ASSERT_EQ(run(config("false", "[false, true]"), "a.db").exit_code, 0);
  ASSERT_EQ(run(config("[false, true]", "true"), "b.db").exit_code, 0);
  const Outcome compared = attnsweep::testing::run_attnsweep("--log-level off compare " + path("a.db") + " " +
                                                             path("b.db") + " --format json");
  const auto json = nlohmann::json::parse(compared.output);
  // Only (no ALiBi, sinks) is in both: its 12 cases match.
  ASSERT_EQ(json.at("cases").size(), 12u);
  for (const auto& c : json.at("cases")) {
    EXPECT_EQ(c.at("key").at("alibi"), false) << c.dump();
    EXPECT_EQ(c.at("key").at("sinks"), true) << c.dump();
  }
  ASSERT_EQ(json.at("only_in_baseline").size(), 12u);
  for (const auto& key : json.at("only_in_baseline")) EXPECT_EQ(key.at("sinks"), false) << key.dump();
  ASSERT_EQ(json.at("only_in_candidate").size(), 12u);
  for (const auto& key : json.at("only_in_candidate")) {
    EXPECT_EQ(key.at("alibi"), true);
    EXPECT_TRUE(contains(key.at("label").get<std::string>(), " alibi sinks")) << key.dump();
  }
}

TEST_F(CliScoreMods, ABadValueIsOneLineNamingTheKeyAndWhatIsAllowed) {
  for (const auto& [alibi, sinks, line] :
       {std::tuple<std::string, std::string, std::string>{"yes", "false", "alibi: expected true or false, got 'yes'"},
        {"false", "1", "sinks: expected true or false, got '1'"},
        {"[true, on]", "false", "alibi[1]: expected true or false, got 'on'"},
        {"false", "[]", "sinks: the list is empty"},
        {"{on: true}", "false", "alibi: expected true, false or a list of them, got a mapping"}}) {
    const Outcome outcome = run(config(alibi, sinks));
    EXPECT_EQ(outcome.exit_code, 2) << alibi << " " << sinks;
    EXPECT_TRUE(contains(outcome.output, "s.yaml:")) << outcome.output;
    EXPECT_TRUE(contains(outcome.output, line)) << alibi << " " << sinks << ": " << outcome.output;
  }
  EXPECT_FALSE(std::ifstream(path("r.db")).good());  // nothing stored
}

}  // namespace

namespace {

// Issue 36, `deterministic`: PyTorch's deterministic algorithms on for a case.
// The sweep sets cuBLAS's deterministic workspace where the environment has
// none and records it; a variant that reaches an operation without a
// deterministic implementation is unsupported with PyTorch's own alert
// (test_nondeterministic raises it as PyTorch's ops do); the same variant
// without determinism runs; labels, the store and compare's key carry it.
TEST_F(CliScoreMods, DeterministicCasesRunWithPyTorchsFlagAndAnOpWithoutItIsUnsupported) {
  const std::string yaml = "name: deterministic\n"
                           "device: cpu\n"
                           "variants: [naive, sdpa_math, test_nondeterministic]\n"
                           "dtypes: [fp32]\n"
                           "deterministic: [false, true]\n"
                           "passes: [forward, backward]\n"
                           "shapes: {batch: 1, heads: 2, seq_len: 32, head_dim: 16}\n"
                           "measure: {warmup: 1, profiled_forwards: 1, min_samples: 3, max_samples: 3}\n";
  const Outcome outcome = attnsweep::testing::run_attnsweep(
      "--log-level info run " + write("d.yaml", yaml) + " --db " + path("d.db"), "ATTNSWEEP_TEST_VARIANTS=1 ");
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  EXPECT_TRUE(contains(outcome.output, "CUBLAS_WORKSPACE_CONFIG=:4096:8 for this run")) << outcome.output;
  SQLite::Database db(path("d.db"), SQLite::OPEN_READONLY);
  EXPECT_EQ(text(db, "SELECT variant, deterministic, pass, status FROM cases ORDER BY plan_index"),
            "naive|0|forward|ok\nnaive|0|backward|ok\nsdpa_math|0|forward|ok\nsdpa_math|0|backward|ok\n"
            "test_nondeterministic|0|forward|ok\ntest_nondeterministic|0|backward|ok\n"
            "naive|1|forward|ok\nnaive|1|backward|ok\nsdpa_math|1|forward|ok\nsdpa_math|1|backward|ok\n"
            "test_nondeterministic|1|forward|unsupported\ntest_nondeterministic|1|backward|unsupported\n");
  EXPECT_TRUE(contains(db.execAndGet("SELECT DISTINCT error_message FROM cases WHERE status = 'unsupported'").getString(),
                       "test_nondeterministic's forward does not have a deterministic implementation"));
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM cases WHERE status = 'ok' AND numerics = 'ok'").getInt(), 10);
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM results WHERE deterministic = 1").getInt(), 6);
  EXPECT_EQ(db.execAndGet("SELECT json_extract(env_vars, '$.CUBLAS_WORKSPACE_CONFIG') FROM runs").getString(), ":4096:8");
  EXPECT_TRUE(contains(outcome.output, "causal deterministic")) << outcome.output;
  // compare keys on it: a deterministic case is not its plain twin.
  const Outcome compared = attnsweep::testing::run_attnsweep("--log-level off compare " + path("d.db") + " " +
                                                             path("d.db") + " --format json");
  const auto json = nlohmann::json::parse(compared.output);
  ASSERT_EQ(json.at("cases").size(), 12u);
  int deterministic = 0;
  for (const auto& c : json.at("cases")) deterministic += c.at("key").at("deterministic").get<bool>() ? 1 : 0;
  EXPECT_EQ(deterministic, 6);
}

}  // namespace

namespace {

// A sharded sweep whose deterministic cases all fall in one shard: every shard
// still runs with cuBLAS's deterministic workspace (decided on the whole sweep),
// so their environments agree and merge takes them (it refuses mixed env_vars).
TEST_F(CliScoreMods, EveryShardOfADeterministicSweepHasTheSameEnvironmentAndMerges) {
  const std::string yaml = "name: shards\ndevice: cpu\nvariants: [naive]\ndtypes: [fp32]\n"
                           "deterministic: [false, true]\n"
                           "shapes: {batch: 1, heads: 2, seq_len: [16, 32], head_dim: 8}\n"
                           "exclude: [{seq_len: 16, deterministic: true}]\n"
                           "measure: {warmup: 1, profiled_forwards: 1, min_samples: 3, max_samples: 3}\n";
  const std::string config = write("shards.yaml", yaml);
  std::string shards;
  int with_deterministic = 0;
  for (const char* shard : {"0/2", "1/2"}) {
    const std::string db = path(std::string("s") + shard[0] + ".db");
    const Outcome outcome = attnsweep::testing::run_attnsweep("--log-level off run " + config + " --shard " + shard +
                                                              " --db " + db);
    ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
    SQLite::Database opened(db, SQLite::OPEN_READONLY);
    EXPECT_EQ(opened.execAndGet("SELECT json_extract(env_vars, '$.CUBLAS_WORKSPACE_CONFIG') FROM runs").getString(),
              ":4096:8") << shard;
    with_deterministic += opened.execAndGet("SELECT count(*) FROM cases WHERE deterministic = 1").getInt() > 0;
    shards += " " + db;
  }
  EXPECT_EQ(with_deterministic, 1);  // the deterministic cases are one shard's
  const Outcome merged = attnsweep::testing::run_attnsweep("merge " + path("all.db") + shards);
  ASSERT_EQ(merged.exit_code, 0) << merged.output;
  SQLite::Database all(path("all.db"), SQLite::OPEN_READONLY);
  EXPECT_EQ(all.execAndGet("SELECT count(*) FROM cases").getInt(), 3);
}

}  // namespace
