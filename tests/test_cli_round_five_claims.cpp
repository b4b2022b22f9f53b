// Hardening round five (issue 55, docs/reliability.md "Hardening, round five"):
// each test failed before its fix. The claims parts (items 6, 10, 14, 17), the
// CPU's regime (item 7) and counters (item 15).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/cli_output_checks.hpp"
#include "tests/support/cli_test.hpp"
#include "tests/support/damaged_database.hpp"
#include "tests/support/file_text.hpp"
#include "tests/support/run_attnsweep.hpp"

namespace {

namespace fs = std::filesystem;

using namespace attnsweep::testing;  // the CLI tests' support: Outcome, run_attnsweep, contains, ...

std::size_t occurrences(const std::string& text, const std::string& part) {
  std::size_t count = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + part.size())) ++count;
  return count;
}

// One case, one claim of it: a run is a second on the CPU.
const char* const kSweep = R"(name: claims
variants: [naive]
dtypes: [fp32]
shapes: {batch: 1, heads: 2, seq_len: 16, head_dim: 8}
measure: {warmup: 1, profiled_forwards: 1, min_samples: 3, max_samples: 3, max_case_seconds: 1}
)";

const char* const kClaims = R"(source: {title: "A paper"}
claims:
  - name: naive-16
    case: {variant: naive, batch: 1, heads: 2, seq_len: 16, head_dim: 8, dtype: fp32, causal: true}
    tflops: 5
)";

// `count` claims of one case, each its own name: the size of a vendor's table.
std::string many_claims(int count) {
  std::string text = "source: {title: \"A table\"}\nclaims:\n";
  for (int i = 0; i < count; ++i) {
    text += "  - name: c" + std::to_string(i) +
            "\n    case: {variant: naive, batch: 1, heads: 2, seq_len: 16, head_dim: 8, dtype: fp32, causal: true}\n"
            "    tflops: " + std::to_string(i + 1) + "\n";
  }
  return text;
}

class CliRoundFiveClaims : public attnsweep::testing::CliTest {
 protected:
  CliRoundFiveClaims() : CliTest("attnsweep-round-five-claims") {}

  std::string config(const std::string& extra = "claims: [published.yaml]\n") {
    return write("claims.yaml", std::string(kSweep) + extra);
  }
  void run_into(const std::string& config_path, const std::string& db) {
    const Outcome ran = run_attnsweep("run " + config_path + " --device cpu --db " + db + " -q");
    ASSERT_EQ(ran.exit_code, 0) << ran.output;
  }
};

// Item 6. Before: compare and report exit 0, printing "-5.0 TFLOP/s ... below the
// claim", and a claim with neither figure `6.953e-310 TFLOP/s` (an empty optional read).
TEST_F(CliRoundFiveClaims, AnImpossibleClaimedFigureOrPlanIndexIsADamagedDatabase) {
  write("published.yaml", kClaims);
  run_into(config(), path("a.db"));
  const std::vector<std::pair<std::string, std::string>> damages = {
      {"UPDATE claims SET claimed_tflops = -5", "claims.claimed_tflops = -5: allowed: a number > 0"},
      {"UPDATE claims SET claimed_tflops = 0", "claims.claimed_tflops = 0: allowed: a number > 0"},
      {"UPDATE claims SET claimed_tflops = 'fast'", "claims.claimed_tflops = 'fast' (text): allowed: a number > 0"},
      {"UPDATE claims SET claimed_time_us = -1", "claims.claimed_time_us = -1: allowed: a number > 0"},
      {"UPDATE claims SET claimed_tflops = NULL",
       "claims.claimed_tflops = NULL: allowed: a number > 0 (claimed_time_us is NULL too, and a claim has a figure)"},
      {"UPDATE claims SET plan_index = 0.5", "claims.plan_index = 0.5 (real): allowed: a whole number >= 0"},
      {"UPDATE claims SET plan_index = -1", "claims.plan_index = -1: allowed: a whole number >= 0"},
  };
  for (const auto& [sql, value] : damages) {
    SCOPED_TRACE(sql);
    fs::remove(path("b.db"));
    fs::copy_file(path("a.db"), path("b.db"));
    damage(path("b.db"), sql);
    const std::string where = path("b.db") + ": run 1, claim published.yaml:naive-16: ";
    const Outcome compared = run_attnsweep("compare " + path("a.db") + " " + path("b.db"));
    EXPECT_EQ(compared.exit_code, 2) << compared.output;
    EXPECT_EQ(compared.output, "error: compare: " + where + value + "\n");
    const Outcome reported = run_attnsweep("report " + path("b.db") + " --format markdown --output -");
    EXPECT_EQ(reported.exit_code, 2) << reported.output;
    EXPECT_EQ(reported.output, "error: report: " + where + value + "\n");
  }
}

// Item 7. Before: the CPU run stored `burst` and 500 ms, and a CPU run compared with
// a saved schema-7 database (a CPU run of `burst`) said "WARNING: measure_regime
// differs ('burst' vs 'sustained'): the times are not like with like"; nightly
// against it was INCONCLUSIVE ("the environment changed in a fact that moves times").
TEST_F(CliRoundFiveClaims, OnTheCpuTheRegimeIsStoredAsSustainedAndNeverCompared) {
  const std::string burst = write("burst.yaml", R"(name: burst
variants: [naive]
dtypes: [fp32]
shapes: {batch: 1, heads: 2, seq_len: 16, head_dim: 8}
measure: {warmup: 1, profiled_forwards: 1, min_samples: 3, max_samples: 3, regime: burst, burst_cooldown_max_ms: 250}
)");
  run_into(burst, path("burst.db"));
  {
    SQLite::Database db(path("burst.db"));
    EXPECT_EQ(db.execAndGet("SELECT measure_regime || ' ' || ifnull(burst_cooldown_max_ms, 'NULL') FROM runs")
                  .getString(),
              "sustained NULL");
  }
  // The saved schema-7 database's run: its config, and it stored `burst` on the CPU.
  const std::string saved = path("v7.db");
  fs::copy_file(std::string(ATTNSWEEP_SOURCE_DIR) + "/tests/data/schema_v7.db", saved);
  std::string saved_config;
  {
    SQLite::Database db(saved);
    ASSERT_EQ(db.execAndGet("SELECT measure_regime FROM runs WHERE run_id = 1").getString(), "burst");
    saved_config = db.execAndGet("SELECT config_yaml FROM runs WHERE run_id = 1").getString();
  }
  const std::string tonight = write("v5.yaml", saved_config);
  run_into(tonight, path("tonight.db"));
  for (const std::string& format : {"text", "json", "markdown"}) {
    const Outcome compared = run_attnsweep("compare " + saved + " " + path("tonight.db") + " --format " + format);
    EXPECT_NE(compared.exit_code, 2) << compared.output;
    EXPECT_FALSE(contains(compared.output, "measure_regime")) << compared.output;
    EXPECT_FALSE(contains(compared.output, "burst_cooldown_max_ms")) << compared.output;
  }
  const Outcome night = run_attnsweep("nightly " + tonight + " --baseline " + saved + " --db " + path("night.db") +
                                      " --threshold 99 --min-change-us 1000000 -q");
  EXPECT_EQ(night.exit_code, 0) << night.output;
  EXPECT_FALSE(contains(night.output, "measure_regime")) << night.output;
  EXPECT_FALSE(contains(night.output, "INCONCLUSIVE")) << night.output;
}

// Item 10: a regression guard that asserts no time. Before: 10,001 claims were read
// in quadratic time (5,000 took over two minutes), so `plan` ran past its hang guard
// (exit 124) instead of refusing them; now the cap is checked before a claim is read.
TEST_F(CliRoundFiveClaims, MoreClaimsThanTheCapAreRefusedInOneLine) {
  write("published.yaml", many_claims(10001));
  const Outcome planned = run_attnsweep("plan " + config() + " --device cpu", "timeout 120 ");
  EXPECT_EQ(planned.exit_code, 2) << planned.output.substr(0, 2000);
  EXPECT_EQ(planned.output, "error: " + path("published.yaml") + ":3:3: claims: 10001 claims; a config's claims files "
                            "may hold at most 10000 claims in all (docs/config.md, \"Claims\")\n");
}

// Item 14 (claims). Before: a FIFO was "no such claims file", and neither refusal
// named the config's line and column.
TEST_F(CliRoundFiveClaims, AClaimsFileThatIsAFifoOrMissingIsRefusedAtItsLineAndColumn) {
  ASSERT_EQ(::mkfifo(path("pipe.yaml").c_str(), 0600), 0);
  const std::string fifo = config("claims: [published.yaml, pipe.yaml]\n");
  write("published.yaml", kClaims);
  const Outcome piped = run_attnsweep("plan " + fifo + " --device cpu", "timeout 60 ");
  EXPECT_EQ(piped.exit_code, 2) << piped.output;
  EXPECT_EQ(piped.output, "error: " + fifo + ":6:26: claims: 'pipe.yaml': is a pipe (FIFO), not a regular file; a "
                          "claims file is a YAML file, its path relative to the config's folder (" +
                              path("pipe.yaml") + ")\n");
  const std::string missing = config("claims:\n  - published.yaml\n  - nope.yaml\n");
  const Outcome absent = run_attnsweep("plan " + missing + " --device cpu");
  EXPECT_EQ(absent.exit_code, 2) << absent.output;
  EXPECT_EQ(absent.output, "error: " + missing + ":8:5: claims: 'nope.yaml': no such claims file (looked for " +
                               path("nope.yaml") + ": a claims file's path is relative to the config's folder)\n");
}

// Item 15. Before: plan and run said nothing, and the report's counters table had one
// row per case, each the same sentence (2 here, 56 in the issue's sweep).
TEST_F(CliRoundFiveClaims, CountersOnTheCpuAreOneWarningAndOneLineOfTheReport) {
  const std::string counted = write("counted.yaml", R"(name: counted
variants: [naive]
dtypes: [fp32]
shapes: {batch: 1, heads: 2, seq_len: [16, 32], head_dim: 8}
measure: {warmup: 1, profiled_forwards: 1, min_samples: 3, max_samples: 3, counters: [dram_bytes, l2_hit_rate]}
)");
  const std::string warning = "measure.counters: hardware counters are read on a CUDA device only; on cpu no counter "
                              "pass runs (each case stores why in cases.counters_why_not)";
  const Outcome planned = run_attnsweep("plan " + counted + " --device cpu");
  ASSERT_EQ(planned.exit_code, 0) << planned.output;
  EXPECT_EQ(occurrences(planned.output, warning), 1u) << planned.output;
  const Outcome ran = run_attnsweep("run " + counted + " --device cpu --db " + path("c.db"));
  ASSERT_EQ(ran.exit_code, 0) << ran.output;
  EXPECT_EQ(occurrences(ran.output, warning), 1u) << ran.output;
  const Outcome reported = run_attnsweep("report " + path("c.db") + " --format markdown --output -");
  ASSERT_EQ(reported.exit_code, 0) << reported.output;
  EXPECT_EQ(occurrences(reported.output, "read on a CUDA device only"), 1u) << reported.output;
  EXPECT_TRUE(contains(reported.output, "## Hardware counters\n\nNot read for any of the 2 cases that asked: hardware "
                                        "counters are read on a CUDA device only (this case ran on the CPU).\n"))
      << reported.output;
}

// Item 17 (claims). Before: plan printed the claim's GPU and file name with their raw
// ESC, newline and U+202E bytes, run's unmatched-claim warning the file name's, and the
// report's HTML claims table kept the raw ESC.
TEST_F(CliRoundFiveClaims, ClaimTextReachesTheTerminalAndThePageEscaped) {
  const std::string file = "pub\x1b[31m.yaml";
  write(file, std::string(R"(source: {title: "A paper)") + "\x1b[2J" + R"("}
measured_on: {gpu: "H200\e[2J\nrow\u202eexe"}
claims:
  - name: naive-16
    case: {variant: naive, batch: 1, heads: 2, seq_len: 16, head_dim: 8, dtype: fp32, causal: true}
    tflops: 5
  - name: naive-64
    case: {variant: naive, batch: 1, heads: 2, seq_len: 64, head_dim: 8, dtype: fp32, causal: true}
    tflops: 5
)");
  const std::string escaped_config = config("claims: [\"pub\\e[31m.yaml\"]\n");
  const std::string raw_bidi = "\xe2\x80\xae";
  const Outcome planned = run_attnsweep("plan " + escaped_config + " --device cpu");
  ASSERT_EQ(planned.exit_code, 0) << planned.output;
  EXPECT_FALSE(contains(planned.output, "\x1b")) << planned.output;
  EXPECT_FALSE(contains(planned.output, raw_bidi)) << planned.output;
  EXPECT_TRUE(contains_each(planned.output, {"  pub\\x1b[31m.yaml:naive-16 (5.0 TFLOP/s on H200\\x1b[2J\\nrow\\u202eexe): "
                                             "case 0 naive 1x2x16x8 fp32 causal\n",
                                             "  pub\\x1b[31m.yaml:naive-64 (5.0 TFLOP/s on H200\\x1b[2J\\nrow\\u202eexe): "
                                             "not measured: "}));
  const Outcome ran = run_attnsweep("run " + escaped_config + " --device cpu --db " + path("r.db"));
  ASSERT_EQ(ran.exit_code, 0) << ran.output;
  EXPECT_FALSE(contains(ran.output, "\x1b")) << ran.output;
  EXPECT_TRUE(contains(ran.output, "claim pub\\x1b[31m.yaml:naive-64 is not measured by this run")) << ran.output;
  const Outcome page = run_attnsweep("report " + path("r.db") + " --output " + path("r.html"));
  ASSERT_EQ(page.exit_code, 0) << page.output;
  const std::string html = read_file(path("r.html"));
  EXPECT_FALSE(contains(html, "\x1b")) << "a raw ESC in the page";
  EXPECT_FALSE(contains(html, raw_bidi)) << "a raw U+202E in the page";
  EXPECT_TRUE(contains(html, "<td>pub\\x1b[31m.yaml:naive-16</td>"));
  EXPECT_TRUE(contains(html, "<td>A paper\\x1b[2J (H200\\x1b[2J\\nrow\\u202eexe)</td>"));
}

}  // namespace
