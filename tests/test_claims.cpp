// Published claims and the backend choice (issue 37): claims files read and
// refused like configs, matched to the plan's cases, stored with the run, and
// the choice view's verdicts from stored medians and confidence intervals.
#include <gtest/gtest.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include <filesystem>
#include <string>
#include <vector>

#include "runner/compare/backend_choice.hpp"
#include "runner/compare/published_claims.hpp"
#include "runner/config/config.hpp"
#include "runner/measure/statistics.hpp"
#include "runner/plan/claims_match.hpp"
#include "runner/plan/plan.hpp"
#include "runner/storage/run_reader.hpp"
#include "runner/storage/store.hpp"
#include "tests/support/run_record.hpp"
#include "tests/support/scratch_directory.hpp"

namespace attnsweep {
namespace {

const char* const kConfig = R"(name: claims
variants: [naive, sdpa_flash, sdpa_cudnn, sdpa_auto]
dtypes: [bf16]
causal: [false, true]
passes: [forward, backward]
shapes: {batch: 1, heads: 8, kv_heads: 2, seq_len: 256, head_dim: 64}
claims: [published.yaml]
)";

const char* const kClaims = R"(source: {title: "A paper", url: "https://example.org/p", where: "Table 2"}
measured_on: {gpu: NVIDIA H100 SXM, software: {cudnn: 9.1.0}}
claims:
  - name: cudnn-fwd-causal
    case: {variant: sdpa_cudnn, batch: 1, heads: 8, kv_heads: 2, seq_len: 256, head_dim: 64, dtype: bf16, causal: true}
    tflops: 400
  - name: flash-bwd
    where: "Figure 3"
    source: {title: "Another paper"}
    measured_on: {gpu: NVIDIA H200}
    case: {variant: sdpa_flash, batch: 1, heads: 8, kv_heads: 2, seq_len_q: 256, seq_len_kv: 256, head_dim: 64,
           dtype: bf16, causal: bottom_right, pass: backward}
    time_us: 50
    tflops: 300
  - name: fa3
    case: {variant: fa3, batch: 1, heads: 8, kv_heads: 2, seq_len: 256, head_dim: 64, dtype: bf16, causal: false}
    tflops: 500
  - name: fp16
    case: {variant: naive, batch: 1, heads: 8, kv_heads: 2, seq_len: 256, head_dim: 64, dtype: fp16, causal: false}
    time_us: 10
)";

TEST(Claims, EachClaimIsMatchedToThePlansCaseOfTheSameMeasurementOrSaysWhyNot) {
  testing::ScratchDirectory scratch("attnsweep-claims");
  scratch.write("published.yaml", kClaims);
  const Config config = load_config(scratch.write("sweep.yaml", kConfig));
  ASSERT_EQ(config.claims.size(), 4u);
  const ClaimedFigure& first = config.claims[0];
  EXPECT_EQ(first.file, "published.yaml");
  EXPECT_EQ(first.source.title, "A paper");
  EXPECT_EQ(first.source.where, "Table 2");
  EXPECT_EQ(first.gpu, "NVIDIA H100 SXM");
  EXPECT_EQ(first.software.at("cudnn"), "9.1.0");
  EXPECT_EQ(*first.tflops, 400);
  // A claim's own source and measured_on replace the file's, key by key.
  EXPECT_EQ(config.claims[1].source.title, "Another paper");
  EXPECT_EQ(config.claims[1].source.url, "https://example.org/p");
  EXPECT_EQ(config.claims[1].source.where, "Figure 3");
  EXPECT_EQ(config.claims[1].gpu, "NVIDIA H200");

  const Plan plan = make_plan(config);
  const std::vector<ClaimMatch> matches = match_claims(config, plan);
  ASSERT_EQ(matches.size(), 4u);
  ASSERT_TRUE(matches[0].plan_index);
  EXPECT_EQ(plan.cases[static_cast<std::size_t>(*matches[0].plan_index)].label(), "sdpa_cudnn 1x8/2x256x64 bf16 causal");
  // Bottom right over a square shape is the causal mask (its canonical form): the config's case.
  ASSERT_TRUE(matches[1].plan_index);
  EXPECT_EQ(plan.cases[static_cast<std::size_t>(*matches[1].plan_index)].label(),
            "sdpa_flash 1x8/2x256x64 bf16 causal backward");
  EXPECT_FALSE(matches[2].plan_index);
  EXPECT_EQ(matches[2].unmatched_reason, "the config has no variant 'fa3'");
  EXPECT_FALSE(matches[3].plan_index);
  EXPECT_EQ(matches[3].unmatched_reason,
            "the config's sweep has no case naive 1x8/2x256x64 fp16 full (add its shape, dtype, mask and pass, or it is excluded)");
}

// A claims file is refused as a config is: one line with the file, line, column, key and what is allowed.
TEST(Claims, ABadClaimIsOneLineNamingTheFileLineKeyAndWhatIsAllowed) {
  testing::ScratchDirectory scratch("attnsweep-claims");
  const std::string config = scratch.write("sweep.yaml", kConfig);
  const std::string good_case =
      "{variant: naive, batch: 1, heads: 8, seq_len: 256, head_dim: 64, dtype: bf16, causal: false}";
  // The message a config is refused with, or "accepted".
  const auto refused = [](const std::string& path) -> std::string {
    try {
      load_config(path);
    } catch (const BadInputError& error) {
      return error.what();
    }
    return "accepted";
  };
  const auto refusal = [&](const std::string& claims) {
    if (claims != "<absent>") scratch.write("published.yaml", claims);
    return refused(config);
  };
  const std::string header = "source: {title: T}\nclaims:\n";
  const std::vector<std::pair<std::string, std::vector<std::string>>> bad = {
      {header + "  - name: a\n    case: " + good_case + "\n",
       {"published.yaml:3:5: claims[0]: a claim needs its figure: tflops (TFLOP/s, above 0) or time_us"}},
      {header + "  - name: a\n    case: " + good_case + "\n    tflops: -3\n", {"published.yaml:5:13: claims[0].tflops"}},
      {header + "  - name: a\n    case: {variant: naive, batch: 1, heads: 8, seq_len: [256, 512], head_dim: 64, dtype: bf16, "
                "causal: false}\n    tflops: 1\n",
       {"published.yaml:4:", "claims[0].case.seq_len: a claim describes one case: give one value, not a list"}},
      {header + "  - name: a\n    case: {variant: naive, batch: 1, heads: 8, seq_len: 256, head_dim: 64, dtype: bf16}\n"
                "    tflops: 1\n",
       {"published.yaml:4:11: claims[0].case.causal: missing; expected false, true (top_left), top_left or bottom_right"}},
      // The config readers' own refusals, restated at the claim's case.
      {header + "  - name: a\n    case: {variant: naive, batch: 1, heads: 8, seq_len: 0, head_dim: 64, dtype: bf16, "
                "causal: false}\n    tflops: 1\n",
       {"published.yaml:4:", "claims[0].case.seq_len: must be between 1 and"}},
      {header + "  - name: a\n    case: {variant: naive, batch: 1, heads: 8, head_dim: 64, dtype: bf16, causal: false}\n"
                "    tflops: 1\n",
       {"published.yaml:3:5: claims[0].case.seq_len: missing"}},
      {header + "  - name: a\n    case: {batch: 1, heads: 8, seq_len: 256, head_dim: 64, dtype: bf16, causal: false}\n"
                "    tflops: 1\n",
       {"published.yaml:4:11: claims[0].case.variant: missing"}},
      {header + "  - name: a\n    case: {variant: naive, batch: 1, heads: 8, seq_len: 256, head_dim: 64, dtype: bf16, "
                "causal: false, window: {left: -2}}\n    tflops: 1\n",
       {"published.yaml:4:", "claims[0].case.window"}},
      // A figure is finite: an infinity would fail the run after the database was opened.
      {header + "  - name: a\n    case: " + good_case + "\n    tflops: inf\n",
       {"published.yaml:5:13: claims[0].tflops: expected a finite number, got 'inf'"}},
      {header + "  - name: a\n    case: " + good_case + "\n    time_us: -Infinity\n",
       {"published.yaml:5:14: claims[0].time_us: expected a finite number"}},
      {header + "  - name: a\n    case: " + good_case + "\n    tflop: 1\n", {"published.yaml:5:5", "tflop", "tflops"}},
      {header + "  - name: a\n    case: " + good_case + "\n    tflops: 1\n  - name: a\n    case: " + good_case +
           "\n    tflops: 2\n",
       {"published.yaml:6:11: claims[1].name: 'a' names two claims of this file"}},
      {"claims:\n  - name: a\n    case: " + good_case + "\n    tflops: 1\n",
       {"published.yaml:2:5: claims[0].source.title: every claim needs its source's title"}},
      {header + "  - name: 'a b'\n    case: " + good_case + "\n    tflops: 1\n",
       {"claims[0].name: 'a b': use letters, digits"}},
      {header + "  - name: a\n    case: {variant: naive, batch: 1, heads: 8, seq_len: 256, head_dim: 64, dtype: bf17, "
                "causal: false}\n    tflops: 1\n",
       {"claims[0].case.dtype", "bf16, fp16, fp32, fp8_e4m3, fp8_e5m2"}},
      {header + "  []\n", {"published.yaml"}},
  };
  for (const auto& [claims, fragments] : bad) {
    const std::string message = refusal(claims);
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    for (const std::string& fragment : fragments) {
      EXPECT_NE(message.find(fragment), std::string::npos) << "'" << fragment << "' not in: " << message << "\n" << claims;
    }
  }
  std::remove(scratch.path("published.yaml").c_str());
  const std::string missing = refusal("<absent>");
  EXPECT_NE(missing.find("sweep.yaml:7:10: claims: 'published.yaml': no such claims file (looked for "), std::string::npos) << missing;
  // In the config: a claims file listed twice.
  const std::string twice = scratch.write("twice.yaml", std::string(kConfig) + "# x\n");
  std::string text = kConfig;
  text.replace(text.find("claims: [published.yaml]"), 24, "claims: [published.yaml, published.yaml]");
  scratch.write("twice.yaml", text);
  const std::string listed_twice = refused(twice);
  EXPECT_NE(listed_twice.find("twice.yaml:7:26: claims: 'published.yaml' is listed twice"), std::string::npos)
      << listed_twice;
  // The same file by another name is the same file: its claims would be stored twice.
  scratch.write("published.yaml", "source: {title: T}\nclaims:\n  - name: a\n    case: " + good_case + "\n    tflops: 1\n");
  std::filesystem::create_directories(scratch.path("sub"));
  text.replace(text.find("claims: [published.yaml, published.yaml]"), 41, "claims: [published.yaml, sub/../published.yaml]");
  scratch.write("twice.yaml", text);
  const std::string named_twice = refused(twice);
  EXPECT_NE(named_twice.find("twice.yaml:7:26: claims: 'sub/../published.yaml': is the file 'published.yaml' already names"),
            std::string::npos)
      << named_twice;
}

// A claim whose case the plan refuses (kv_heads that do not divide heads; a
// bottom-right mask with more queries than keys) is refused at the claim, by
// `plan` and by `run` alike: match_claims names the claims file, line and key.
TEST(Claims, AClaimWhoseCaseCannotBePlannedIsRefusedAtTheClaim) {
  testing::ScratchDirectory scratch("attnsweep-claims");
  const std::string config_path = scratch.write("sweep.yaml", kConfig);
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"{variant: naive, batch: 1, heads: 8, kv_heads: 3, seq_len: 256, head_dim: 64, dtype: bf16, causal: false}",
       "published.yaml:3:5: claims[0].case"},
      {"{variant: naive, batch: 1, heads: 8, seq_len_q: 512, seq_len_kv: 256, head_dim: 64, dtype: bf16, causal: bottom_right}",
       "published.yaml:3:5: claims[0].case"},
  };
  for (const auto& [claimed, expected] : bad) {
    scratch.write("published.yaml", "source: {title: T}\nclaims:\n  - name: a\n    case: " + claimed + "\n    tflops: 1\n");
    try {
      const Config config = load_config(config_path);
      match_claims(config, make_plan(config));
      ADD_FAILURE() << "accepted: " << claimed;
    } catch (const ConfigError& error) {
      const std::string message = error.what();
      EXPECT_EQ(message.rfind(scratch.path("published.yaml") + ":", 0), 0u) << message;
      EXPECT_NE(message.find(expected), std::string::npos) << message;
      EXPECT_EQ(message.find("shapes"), std::string::npos) << message;
      EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    }
  }
}

class StoredClaims : public ::testing::Test {
 protected:
  testing::ScratchDirectory scratch_{"attnsweep-claims"};
  std::string db_ = scratch_.path("r.db");

  // A case of `variant` at the same shape, dtype and mask, with its median and its CI share.
  static std::pair<Case, CaseResult> timed(int index, const std::string& variant, double median_us, double ci_rel,
                                           const std::string& backend = "") {
    Case c{index, variant, Shape{1, 8, 8, 256, 256, 64}, Dtype::bf16, true};
    CaseResult r;
    r.device = Device::cuda(0);
    r.flops = 1e9;
    r.tflops = 1e9 / (median_us * 1e-6) / 1e12;
    r.sdpa_backend = backend;
    std::vector<double> samples(20, median_us);
    r.gpu_time_us = summarize(samples);
    r.gpu_time_us->median_ci_rel = ci_rel;
    return {c, r};
  }
};

TEST_F(StoredClaims, ClaimsAreStoredWithTheRunAndTheResultsViewGivesTheirRatio) {
  storage::Store store(db_);
  const std::int64_t run = store.begin_run(testing::unit_run_record("claims"));
  const auto [c, r] = timed(0, "sdpa_cudnn", 80.0, 0.01, "cudnn_attention");
  store.add_case(run, c, r);
  storage::ClaimRow by_time{"p.yaml", "by-time", "A paper", "", "", "", "", "Table 1", "NVIDIA H100", "cudnn 9.1.0", "",
                            "sdpa_cudnn", c.label(), 10.0, 100.0, 0, ""};
  storage::ClaimRow by_tflops = by_time;
  by_tflops.name = "by-tflops";
  by_tflops.claimed_time_us.reset();
  by_tflops.claimed_tflops = 25.0;
  storage::ClaimRow unmatched = by_time;
  unmatched.name = "unmatched";
  unmatched.plan_index.reset();
  unmatched.unmatched_reason = "the config has no variant 'fa3'";
  store.add_claims(run, {by_time, by_tflops, unmatched});
  store.add_claims(run, {by_time});  // a resumed run: kept as it was
  store.finish_run(run, RunStatus::done);

  SQLite::Database db(db_, SQLite::OPEN_READONLY);
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM claims").getInt(), 3);
  // By time where the claim gives one: 100 us claimed, 80 measured: 1.25 (faster than claimed).
  EXPECT_DOUBLE_EQ(db.execAndGet("SELECT claim_ratio FROM results").getDouble(), 1.25);
  EXPECT_EQ(db.execAndGet("SELECT claim_source FROM results").getString(), "A paper (Table 1)");
  // 1e9 FLOPs in 80 us is 12.5 TFLOP/s against 25 claimed.
  EXPECT_DOUBLE_EQ(db.execAndGet("SELECT claim_ratio FROM claim_results WHERE name = 'by-tflops'").getDouble(), 0.5);
  EXPECT_TRUE(db.execAndGet("SELECT claim_ratio FROM claim_results WHERE name = 'unmatched'").isNull());
  EXPECT_THROW(SQLite::Database(db_, SQLite::OPEN_READWRITE)
                   .exec("INSERT INTO claims (run_id, claims_file, name, source_title, variant, case_label) "
                         "VALUES (1, 'p.yaml', 'no-figure', 'T', 'naive', 'x')"),
               SQLite::Exception);

  const auto lines = compare::read_claim_lines(storage::RunReader(db_), run);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0].verdict, "above the claim");  // 100 us claimed, 80 measured
  EXPECT_EQ(lines[1].verdict, "below the claim");
  EXPECT_EQ(lines[2].verdict, "not measured: the config has no variant 'fa3'");
  EXPECT_TRUE(lines[2].differences.empty());
}

TEST_F(StoredClaims, TheChoiceViewNamesTheFastestItsLeadAndPyTorchsChoice) {
  storage::Store store(db_);
  const std::int64_t run = store.begin_run(testing::unit_run_record("choice"));
  // Shape A: flash 100 +-1%, cuDNN 130 +-1% (apart: significant), PyTorch chose cuDNN: slower.
  const std::vector<std::tuple<std::string, double, double, std::string>> a = {
      {"naive", 900, 0.01, ""}, {"sdpa_flash", 100, 0.01, "flash_attention"},
      {"sdpa_cudnn", 130, 0.01, "cudnn_attention"}, {"sdpa_auto", 131, 0.01, "cudnn_attention"}};
  int index = 0;
  for (const auto& [variant, median, ci, backend] : a) {
    const auto [c, r] = timed(index++, variant, median, ci, backend);
    store.add_case(run, c, r);
  }
  // Shape B (head_dim 128): flash 100 +-5%, cuDNN 104 +-5% (overlap: a tie), PyTorch chose flash.
  for (const auto& [variant, median, backend] : std::vector<std::tuple<std::string, double, std::string>>{
           {"sdpa_flash", 100, "flash_attention"}, {"sdpa_cudnn", 104, "cudnn_attention"}, {"sdpa_auto", 101, "flash_attention"}}) {
    auto [c, r] = timed(index++, variant, median, 0.05, backend);
    c.shape.head_dim = 128;
    store.add_case(run, c, r);
  }
  store.finish_run(run, RunStatus::done);
  SQLite::Database db(db_, SQLite::OPEN_READONLY);
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM choice").getInt(), 2);
  const storage::RunReader reader(db_);
  const auto lines = compare::read_choices(reader, run);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].group, "1x8x256x64 bf16 causal");
  EXPECT_EQ(lines[0].fastest_variant, "sdpa_flash");
  EXPECT_EQ(lines[0].runner_up_variant, "sdpa_cudnn");
  EXPECT_NEAR(*lines[0].lead, 0.30, 1e-9);
  EXPECT_EQ(lines[0].lead_verdict, "significant");
  EXPECT_EQ(lines[0].auto_verdict, "slower");
  EXPECT_EQ(lines[0].sentence, "SDPA chose cuDNN; sdpa_flash is 31% faster (significant)");
  EXPECT_EQ(lines[1].fastest_variant, "sdpa_flash");
  EXPECT_EQ(lines[1].lead_verdict, "tie");
  EXPECT_EQ(lines[1].auto_verdict, "fastest");
  EXPECT_EQ(lines[1].sentence,
            "SDPA chose flash, the fastest variant's backend; sdpa_flash and sdpa_cudnn tie (4.0%, the intervals overlap)");

  // A second run where cuDNN overtakes flash at shape A: compare flags the change.
  const std::int64_t second = store.begin_run(testing::unit_run_record("choice"));
  index = 0;
  for (const auto& [variant, median] : std::vector<std::pair<std::string, double>>{{"sdpa_flash", 100}, {"sdpa_cudnn", 80}}) {
    const auto [c, r] = timed(index++, variant, median, 0.01);
    store.add_case(second, c, r);
  }
  store.finish_run(second, RunStatus::done);
  const auto changes = compare::choice_changes(lines, compare::read_choices(reader, second));
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].baseline_fastest, "sdpa_flash");
  EXPECT_EQ(changes[0].candidate_fastest, "sdpa_cudnn");
  EXPECT_TRUE(changes[0].significant());
}

// A gap of 2x or more is said as a factor, by the lead's convention (the slower median over the
// faster): on the H200, SDPA's cuDNN path ran gpt-oss's 1024-key window as a dense mask, 20x slower
// than flash, which the sentence once called "95% faster" (a share of time saved) beside a "1876%" lead.
TEST_F(StoredClaims, AGapOfTwiceOrMoreIsAFactorNotAShareOfTimeSaved) {
  storage::Store store(db_);
  const std::int64_t run = store.begin_run(testing::unit_run_record("choice"));
  int index = 0;
  for (const auto& [variant, median, backend] : std::vector<std::tuple<std::string, double, std::string>>{
           {"sdpa_flash", 100, "flash_attention"}, {"sdpa_cudnn", 2000, "cudnn_attention"},
           {"sdpa_auto", 2100, "cudnn_attention"}}) {
    const auto [c, r] = timed(index++, variant, median, 0.01, backend);
    store.add_case(run, c, r);
  }
  // At head_dim 128, no sdpa_auto: a lead of 99.6% would print "100%" as a percent, so it is the factor already.
  for (const auto& [variant, median, backend] : std::vector<std::tuple<std::string, double, std::string>>{
           {"sdpa_flash", 100, "flash_attention"}, {"sdpa_cudnn", 199.6, "cudnn_attention"}}) {
    auto [c, r] = timed(index++, variant, median, 0.01, backend);
    c.shape.head_dim = 128;
    store.add_case(run, c, r);
  }
  store.finish_run(run, RunStatus::done);
  const auto lines = compare::read_choices(storage::RunReader(db_), run);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NEAR(*lines[0].lead, 19.0, 1e-9);
  EXPECT_EQ(lines[0].sentence, "SDPA chose cuDNN; sdpa_flash is 21.0x faster (significant)");
  EXPECT_EQ(lines[1].sentence, "sdpa_flash is fastest, 2.0x as fast as sdpa_cudnn (significant)");
  const report::Table table = compare::choice_table(lines);
  ASSERT_EQ(table.rows.size(), 2u);
  ASSERT_EQ(table.columns[4].name, "lead");
  EXPECT_EQ(table.rows[0][4].to_text(), "20.0x");
  EXPECT_EQ(table.rows[1][4].to_text(), "2.0x");
}

// PyTorch's choice can beat every variant timed (it ran a backend none of them
// pins): 'faster', by the same convention turned round, never "the fastest variant is -200% faster".
// Without confidence intervals nothing is called a tie.
TEST_F(StoredClaims, PyTorchsChoiceFasterThanEveryVariantTimedIsSaidSo) {
  storage::Store store(db_);
  const std::int64_t run = store.begin_run(testing::unit_run_record("choice"));
  int index = 0;
  for (const auto& [variant, median, backend] : std::vector<std::tuple<std::string, double, std::string>>{
           {"naive", 300, ""}, {"sdpa_math", 400, "math"}, {"sdpa_auto", 100, "flash_attention"}}) {
    const auto [c, r] = timed(index++, variant, median, 0.01, backend);
    store.add_case(run, c, r);
  }
  for (const auto& [variant, median, backend] : std::vector<std::tuple<std::string, double, std::string>>{
           {"naive", 300, ""}, {"sdpa_math", 400, "math"}, {"sdpa_auto", 350, "math"}}) {
    auto [c, r] = timed(index++, variant, median, 0.01, backend);
    c.shape.head_dim = 128;
    r.gpu_time_us->median_ci_rel.reset();  // too few samples for an interval
    store.add_case(run, c, r);
  }
  for (const auto& [variant, median] : std::vector<std::pair<std::string, double>>{{"naive", 300}, {"sdpa_math", 400}}) {
    auto [c, r] = timed(index++, variant, median, 0.01);
    c.shape.head_dim = 32;
    r.gpu_time_us->median_ci_rel.reset();
    store.add_case(run, c, r);
  }
  store.finish_run(run, RunStatus::done);
  const auto lines = compare::read_choices(storage::RunReader(db_), run);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0].fastest_variant, "naive");
  EXPECT_EQ(lines[0].auto_verdict, "faster");
  EXPECT_EQ(lines[0].sentence,
            "SDPA chose flash, 3.0x faster than naive, the fastest variant timed (significant); "
            "naive is fastest, 33% ahead of sdpa_math (significant)");
  EXPECT_EQ(lines[1].lead_verdict, "unknown");
  EXPECT_EQ(lines[1].auto_verdict, "unknown");
  EXPECT_EQ(lines[1].sentence,
            "SDPA chose math; naive is 17% faster (no confidence intervals)");
  EXPECT_EQ(lines[2].sentence, "naive is 33% ahead of sdpa_math (no confidence intervals to tell whether that is real)");
  SQLite::Database db(db_, SQLite::OPEN_READONLY);
  EXPECT_EQ(db.execAndGet("SELECT group_concat(ifnull(auto_verdict, '-'), ',') FROM (SELECT * FROM choice ORDER BY "
                          "fastest_case_id)").getString(),
            "faster,unknown,-");
}

}  // namespace
}  // namespace attnsweep
