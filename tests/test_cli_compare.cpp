// `attnsweep compare` end to end on the CPU: a real sweep database written by
// `attnsweep run`, compared with itself and with a copy holding a planted
// change; exit codes 0, 1 and 2; each bad argument's one line; the markdown
// headline; the JSON; and neither database ever changed.
#include <gtest/gtest.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "runner/common/sha256.hpp"
#include "tests/support/file_text.hpp"
#include "tests/support/cli_test.hpp"

namespace {

namespace fs = std::filesystem;

using attnsweep::testing::Outcome;

// Four CPU cases with 20 samples each: well under a second.
const char* const kTinyConfig = R"(name: tiny-compare
variants: [naive, sdpa_math]
dtypes: [fp32]
shapes: {batch: 1, heads: 2, seq_len: [16, 32], head_dim: 8}
measure: {warmup: 1, profiled_forwards: 1, min_samples: 20, max_samples: 20, cuda_graph: false}
)";

std::string file_hash(const std::string& path) { return attnsweep::sha256_hex(attnsweep::testing::read_file(path)); }

std::size_t lines(const std::string& text) { return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')); }

class CliCompare : public attnsweep::testing::CliTest {
 protected:
  CliCompare() : CliTest("attnsweep-cli-compare") {}
  void SetUp() override {
    const std::string config = write("tiny.yaml", kTinyConfig);
    baseline_ = path("baseline.db");
    const Outcome outcome = run("--log-level off run " + config + " --db " + baseline_ + " --device cpu");
    ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
    // One file, with everything in it (no -wal beside it), so copies are whole.
    SQLite::Database(baseline_, SQLite::OPEN_READWRITE).exec("PRAGMA wal_checkpoint(TRUNCATE)");
  }

  std::string copy(const std::string& name) const {
    fs::copy_file(baseline_, path(name));
    return path(name);
  }

  static void plant(const std::string& db, const std::string& sql) {
    SQLite::Database(db, SQLite::OPEN_READWRITE).exec(sql + "; PRAGMA wal_checkpoint(TRUNCATE)");
  }

  // Runs compare and checks that neither database changed.
  Outcome compare(const std::string& arguments, const std::string& other = "") const {
    const std::string before = file_hash(baseline_), other_before = other.empty() ? "" : file_hash(other);
    Outcome outcome = run("compare " + arguments);
    EXPECT_EQ(file_hash(baseline_), before) << "compare changed the baseline";
    if (!other.empty()) EXPECT_EQ(file_hash(other), other_before) << "compare changed the candidate";
    return outcome;
  }

  // Exit 2 and exactly one line, "error: compare: ..." holding `expected`.
  void expect_refused(const std::string& arguments, const std::string& expected) const {
    const Outcome outcome = compare(arguments);
    EXPECT_EQ(outcome.exit_code, 2) << arguments << "\n" << outcome.output;
    EXPECT_EQ(lines(outcome.output), 1u) << arguments << "\n" << outcome.output;
    EXPECT_EQ(outcome.output.rfind("error: compare: ", 0), 0u) << outcome.output;
    EXPECT_NE(outcome.output.find(expected), std::string::npos) << arguments << "\n" << outcome.output;
  }

  static Outcome run(const std::string& arguments) { return attnsweep::testing::run_attnsweep(arguments); }

  std::string baseline_;
};

TEST_F(CliCompare, ARealSweepAgainstACopyOfItselfExitsZero) {
  const std::string copied = copy("copy.db");
  const Outcome outcome = compare(baseline_ + " " + copied, copied);
  EXPECT_EQ(outcome.exit_code, 0) << outcome.output;
  EXPECT_EQ(outcome.output.rfind("attnsweep compare: 0 regressions, 0 improvements, 4 same\n", 0), 0u) << outcome.output;
  EXPECT_NE(outcome.output.find("Environment: no difference"), std::string::npos) << outcome.output;
  EXPECT_NE(outcome.output.find("Findings: none"), std::string::npos) << outcome.output;
  EXPECT_NE(outcome.output.find("Time verdicts: SAME 4 FASTER 0 SLOWER 0 AMBIGUOUS 0 NOT_TIMED 0"), std::string::npos)
      << outcome.output;
}

TEST_F(CliCompare, ARunAgainstItselfInOneFileExitsZero) {
  const Outcome outcome = compare(baseline_ + ":1 " + baseline_ + ":latest");
  EXPECT_EQ(outcome.exit_code, 0) << outcome.output;
  EXPECT_NE(outcome.output.find("baseline:  " + baseline_ + " run 1 (tiny-compare, done"), std::string::npos)
      << outcome.output;
}

TEST_F(CliCompare, ARegressionExitsOne) {
  const std::string candidate = copy("candidate.db");
  plant(candidate, "UPDATE cases SET status = 'error', error_message = 'boom' WHERE plan_index = 1");
  const Outcome outcome = compare(baseline_ + " " + candidate, candidate);
  EXPECT_EQ(outcome.exit_code, 1) << outcome.output;
  EXPECT_EQ(outcome.output.rfind("attnsweep compare: 1 regression, 0 improvements, 3 same\n", 0), 0u) << outcome.output;
  EXPECT_NE(outcome.output.find("REGRESSION"), std::string::npos) << outcome.output;
  EXPECT_NE(outcome.output.find("ran in the baseline, error now: boom"), std::string::npos) << outcome.output;
}

TEST_F(CliCompare, TheThresholdDecidesWhatIsSame) {
  // Tight samples on both sides first (a loaded CPU spreads them past 50% at times,
  // and the test is about the threshold, not about that noise), then 50% slower.
  plant(baseline_, "UPDATE samples SET cpu_time_us = 100 + sample_index % 5 WHERE case_id = "
                   "(SELECT case_id FROM cases WHERE plan_index = 0)");
  const std::string candidate = copy("slower.db");
  plant(candidate, "UPDATE samples SET cpu_time_us = cpu_time_us * 1.5 WHERE case_id = "
                   "(SELECT case_id FROM cases WHERE plan_index = 0)");
  const Outcome slower = compare(baseline_ + " " + candidate, candidate);
  EXPECT_EQ(slower.exit_code, 1) << slower.output;
  EXPECT_NE(slower.output.find("SLOWER +50.0%"), std::string::npos) << slower.output;
  const Outcome loose = compare(baseline_ + " " + candidate + " --threshold 60", candidate);
  EXPECT_EQ(loose.exit_code, 0) << loose.output;
  EXPECT_NE(loose.output.find("4 same"), std::string::npos) << loose.output;
  EXPECT_NE(loose.output.find("SAME under 60% or 2 us change"), std::string::npos) << loose.output;
  // A floor of a second is more than any change here: SAME too.
  const Outcome floor = compare(baseline_ + " " + candidate + " --min-change-us 1000000", candidate);
  EXPECT_EQ(floor.exit_code, 0) << floor.output;
  EXPECT_NE(floor.output.find("SAME under 5% or 1e+06 us change"), std::string::npos) << floor.output;
  const Outcome bad = compare(baseline_ + " " + candidate + " --min-change-us -1", candidate);
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("--min-change-us: invalid value '-1'; allowed: microseconds, a number >= 0"),
            std::string::npos) << bad.output;
}

// Issue 24: a 50% slowdown of a case whose candidate is labelled suspect is no
// regression: its time gets no verdict, and the output says which side and why.
TEST_F(CliCompare, ASuspectCaseGetsNoTimeVerdictAndSaysWhy) {
  plant(baseline_, "UPDATE samples SET cpu_time_us = 100 + sample_index % 5 WHERE case_id = "
                   "(SELECT case_id FROM cases WHERE plan_index = 0)");
  const std::string candidate = copy("suspect.db");
  plant(candidate, "UPDATE samples SET cpu_time_us = cpu_time_us * 1.5 WHERE case_id = "
                   "(SELECT case_id FROM cases WHERE plan_index = 0); "
                   "UPDATE cases SET validity = 'suspect', validity_reasons = 'power_capped: 100% of the kept samples "
                   "under a power cap; few_samples: 4 kept sample(s), under min_samples 10' WHERE plan_index = 0");
  const Outcome outcome = compare(baseline_ + " " + candidate, candidate);
  EXPECT_EQ(outcome.exit_code, 0) << outcome.output;
  EXPECT_EQ(outcome.output.rfind("attnsweep compare: 0 regressions, 0 improvements, 3 same, 1 suspect (time not judged)\n", 0),
            0u) << outcome.output;
  EXPECT_NE(outcome.output.find("SUSPECT, time not judged: the candidate is suspect (power_capped, few_samples)"),
            std::string::npos) << outcome.output;
  EXPECT_NE(outcome.output.find("SUSPECT 1"), std::string::npos) << outcome.output;
  // ok in the baseline, suspect now: a note of its own, never counted.
  EXPECT_NE(outcome.output.find("validity"), std::string::npos) << outcome.output;
  EXPECT_NE(outcome.output.find("suspect (power_capped, few_samples)"), std::string::npos) << outcome.output;
  // With a power-cap share that differs too (what power_capped comes with), still SUSPECT:
  // neither a cap-marked SLOWER nor INCONCLUSIVE (exit 4).
  plant(candidate, "UPDATE cases SET power_cap_share = 1.0 WHERE plan_index = 0");
  plant(baseline_, "UPDATE cases SET power_cap_share = 0.0 WHERE plan_index = 0");
  const Outcome capped = compare(baseline_ + " " + candidate, candidate);
  EXPECT_EQ(capped.exit_code, 0) << capped.output;
  EXPECT_NE(capped.output.find("SUSPECT, time not judged: the candidate is suspect (power_capped, few_samples)"),
            std::string::npos) << capped.output;
  EXPECT_EQ(capped.output.find("INCONCLUSIVE"), std::string::npos) << capped.output;
  plant(candidate, "UPDATE cases SET power_cap_share = NULL");
  plant(baseline_, "UPDATE cases SET power_cap_share = NULL");
  // The same slowdown without the label is a regression, as before.
  plant(candidate, "UPDATE cases SET validity = 'ok', validity_reasons = NULL");
  EXPECT_EQ(compare(baseline_ + " " + candidate, candidate).exit_code, 1);
  // A suspect baseline is named as such, and in the JSON the verdict is SUSPECT.
  plant(baseline_, "UPDATE cases SET validity = 'suspect', validity_reasons = 'shared_gpu: 1 other' WHERE plan_index = 0");
  const Outcome json = compare(baseline_ + " " + candidate + " --format json", candidate);
  EXPECT_EQ(json.exit_code, 0) << json.output;
  EXPECT_NE(json.output.find("the baseline is suspect (shared_gpu)"), std::string::npos) << json.output;
  EXPECT_NE(json.output.find("\"SUSPECT\""), std::string::npos) << json.output;
}

TEST_F(CliCompare, MarkdownLeadsWithTheHeadline) {
  const std::string candidate = copy("candidate.db");
  plant(candidate, "UPDATE cases SET status = 'error', error_message = 'boom' WHERE plan_index = 1; "
                   "UPDATE runs SET git_sha = 'f00dfeedbeef'");
  const Outcome outcome = compare(baseline_ + " " + candidate + " --format markdown", candidate);
  EXPECT_EQ(outcome.exit_code, 1) << outcome.output;
  EXPECT_EQ(outcome.output.rfind("### attnsweep compare: 1 regression, 0 improvements, 3 same\n", 0), 0u)
      << outcome.output;
  EXPECT_NE(outcome.output.find("| git_sha | "), std::string::npos) << outcome.output;
  EXPECT_NE(outcome.output.find("| status | status | ok | error | REGRESSION |"), std::string::npos) << outcome.output;
  EXPECT_NE(outcome.output.find("<details><summary>Counts per verdict</summary>"), std::string::npos);
}

// Issue 21, finding 16: text stored in a database is data. A config name "t\n<!--"
// started an HTML comment at a line start (GitHub hid every finding below it),
// and ESC sequences in a stored host name reached the terminal raw.
TEST_F(CliCompare, StoredTextNeitherHidesMarkdownNorReachesTheTerminalRaw) {
  const std::string candidate = copy("candidate.db");
  plant(candidate, "UPDATE cases SET status = 'error', error_message = 'boom' || char(27) || ']0;owned' || char(7) "
                   "WHERE plan_index = 1; UPDATE runs SET name = 't' || char(10) || '<!--', "
                   "device_name = 'CPU' || char(10) || '## injected' || char(10) || '<img src=x onerror=alert(1)>', "
                   "hostname = 'h' || char(27) || '[2J' || char(155) || '`x'");
  const Outcome md = compare(baseline_ + " " + candidate + " --format markdown", candidate);
  EXPECT_EQ(md.exit_code, 1) << md.output;
  std::istringstream md_lines(md.output);
  for (std::string line; std::getline(md_lines, line);) {
    EXPECT_NE(line.rfind("<!--", 0), 0u) << "a line opens an HTML comment:\n" << md.output;
    EXPECT_NE(line.rfind("## injected", 0), 0u) << md.output;
  }
  EXPECT_NE(md.output.find("Candidate " + candidate + " run 1 (t \\<!--, done, "), std::string::npos) << md.output;
  EXPECT_NE(md.output.find(", CPU ## injected \\<img src=x onerror=alert(1)>, git "), std::string::npos) << md.output;
  EXPECT_NE(md.output.find("| hostname | "), std::string::npos) << md.output;
  EXPECT_NE(md.output.find(" | h\\\\x1b[2J\\\\u009b\\`x |"), std::string::npos) << md.output;
  // The findings after it are still there.
  EXPECT_NE(md.output.find("| status | status | ok | error | REGRESSION | "), std::string::npos) << md.output;
  for (const char* raw : {"\x1b", "\x07", "\xc2\x9b"}) EXPECT_EQ(md.output.find(raw), std::string::npos) << md.output;

  const Outcome text = compare(baseline_ + " " + candidate, candidate);
  EXPECT_EQ(text.exit_code, 1) << text.output;
  for (const char* raw : {"\x1b", "\x07", "\xc2\x9b"}) EXPECT_EQ(text.output.find(raw), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("\ncandidate: " + candidate + " run 1 (t\\n<!--, done, "), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("CPU\\n## injected\\n<img src=x onerror=alert(1)>, git "), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("h\\x1b[2J\\u009b`x"), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("boom\\x1b]0;owned\\x07"), std::string::npos) << text.output;
}

// query's table is for a terminal: controls shown as escapes; csv and json are data formats.
TEST_F(CliCompare, QueryShowsControlCharactersAsEscapesInItsTableOnly) {
  const std::string sql = "\"SELECT 'h' || char(27) || '[2J' || char(10) || 'x' || char(155) AS host FROM runs\"";
  const Outcome table = run("query " + baseline_ + " " + sql);
  ASSERT_EQ(table.exit_code, 0) << table.output;
  EXPECT_EQ(table.output, "host\nh\\x1b[2J\\nx\\u009b\n");
  const Outcome csv = run("query " + baseline_ + " " + sql + " --format csv");
  EXPECT_EQ(csv.output, "host\n\"h\x1b[2J\nx\xc2\x9b\"\n");
  const Outcome json = run("query " + baseline_ + " " + sql + " --format json");
  EXPECT_NE(json.output.find("\"h\\u001b[2J\\nx\xc2\x9b\""), std::string::npos) << json.output;
}

TEST_F(CliCompare, JsonParses) {
  const std::string candidate = copy("candidate.db");
  const Outcome outcome = compare(baseline_ + " " + candidate + " --format json", candidate);
  EXPECT_EQ(outcome.exit_code, 0) << outcome.output;
  const nlohmann::json json = nlohmann::json::parse(outcome.output);
  EXPECT_EQ(json["format"], "attnsweep-compare/1");
  EXPECT_EQ(json["has_regression"], false);
  EXPECT_EQ(json["summary"]["same"], 4);
  EXPECT_EQ(json["summary"]["matched_cases"], 4);
  EXPECT_EQ(json["baseline"]["path"], baseline_);
  EXPECT_EQ(json["candidate"]["run_id"], 1);
  ASSERT_EQ(json["cases"].size(), 4u);
  EXPECT_EQ(json["cases"][0]["key"]["device"], "cpu");
  EXPECT_EQ(json["cases"][0]["time"]["verdict"], "SAME");
  EXPECT_EQ(json["cases"][0]["time"]["baseline_samples"], 20);
}

TEST_F(CliCompare, EachBadArgumentIsOneLineAndExitTwo) {
  const std::string text_file = write("notes.db", "not a database\n");
  expect_refused(path("absent.db") + " " + baseline_, "BASELINE: " + path("absent.db") + ": database not found");
  expect_refused(baseline_ + " " + text_file, "CANDIDATE: " + text_file + ": cannot read as a results database");
  expect_refused(baseline_ + " " + write("empty.db", ""), "is not an attnsweep results database");
  expect_refused(baseline_ + ":9 " + baseline_, "BASELINE: " + baseline_ + " has no run 9; its runs: 1");
  expect_refused(baseline_ + " " + baseline_ + ":x",
                 "CANDIDATE: '" + baseline_ + ":x': 'x' after ':' is not a run id (a positive integer) or latest");
  expect_refused(baseline_ + " " + baseline_ + ":0", "is not a run id");
  expect_refused(baseline_ + " " + baseline_ + " --format html",
                 "--format: unknown value 'html'; allowed: text, markdown, json");
  for (const std::string bad : {"0", "100", "-5", "abc", "5%", "nan", "inf", "0x10", "' 5'", "1e1x"}) {
    const std::string given = bad.front() == '\'' ? bad.substr(1, bad.size() - 2) : bad;
    expect_refused(baseline_ + " " + baseline_ + " --threshold " + bad,
                   "--threshold: invalid value '" + given + "'; allowed: a number of percent > 0 and < 100");
  }
  expect_refused(baseline_, "missing the candidate argument");
}

TEST_F(CliCompare, ARunComparedWithItselfIsSaidLoudly) {
  // The same run on both sides can never differ: a typo, or a baseline resolved after the
  // candidate was written into its file. Said, not refused (exit 0).
  const Outcome outcome = compare(baseline_ + " " + baseline_ + ":1");
  EXPECT_EQ(outcome.exit_code, 0) << outcome.output;
  EXPECT_NE(outcome.output.find("WARNING: the baseline and the candidate are the same run (" + baseline_ +
                                " run 1): nothing can differ"),
            std::string::npos)
      << outcome.output;
  // A byte copy is another file: no such warning.
  const std::string copied = copy("copy.db");
  EXPECT_EQ(compare(baseline_ + " " + copied, copied).output.find("same run"), std::string::npos);
}

TEST_F(CliCompare, JsonIsValidWhateverTheBytesOfAPath) {
  // A file name that is not UTF-8 (JSON strings must be): the JSON still parses.
  const std::string odd = copy("odd-\xff-name.db");
  const Outcome outcome = compare(baseline_ + " " + odd + " --format json", odd);
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  const nlohmann::json json = nlohmann::json::parse(outcome.output);
  EXPECT_EQ(json["summary"]["same"], 4);
  EXPECT_NE(json["candidate"]["path"].get<std::string>().find("odd-"), std::string::npos);
}

TEST_F(CliCompare, AnOlderSchemaIsReadThroughAMigratedCopy) {
  // A baseline pinned before an upgrade of attnsweep (schema 6): compared, never changed.
  const std::string v6 = path("v6.db");
  fs::copy_file(std::string(ATTNSWEEP_SOURCE_DIR) + "/tests/data/schema_v6.db", v6);
  const std::string before = file_hash(v6);
  const Outcome itself = compare(v6 + " " + v6, v6);
  EXPECT_EQ(itself.exit_code, 0) << itself.output;
  EXPECT_NE(itself.output.find("baseline:  " + v6 + " run 1 (saved-v6, done"), std::string::npos) << itself.output;
  EXPECT_EQ(itself.output.find("attnsweep-compare-"), std::string::npos) << "the copy's path is shown" << itself.output;
  const Outcome against = compare(v6 + " " + baseline_ + " --format json", v6);
  ASSERT_EQ(against.exit_code, 0) << against.output;
  const nlohmann::json json = nlohmann::json::parse(against.output);
  EXPECT_EQ(json["baseline"]["path"], v6);
  EXPECT_EQ(file_hash(v6), before);
  // Run ids are checked against the file all the same, and the message names the file.
  expect_refused(v6 + ":9 " + baseline_, "BASELINE: " + v6 + " has no run 9; its runs: 1");
}

TEST_F(CliCompare, HelpExplainsTheVerdictsAndExitCodes) {
  const Outcome outcome = run("compare --help");
  EXPECT_EQ(outcome.exit_code, 0) << outcome.output;
  for (const char* expected : {"SAME", "SLOWER", "AMBIGUOUS", "Mann-Whitney", "MARKED", "0 no regression",
                               "1 a regression", "2 bad input", "--threshold", "--format", "Why a case changed"}) {
    EXPECT_NE(outcome.output.find(expected), std::string::npos) << expected << "\n" << outcome.output;
  }
}

// Two real H200 databases (an excerpt of bench.db and a copy in which
// sdpa_cudnn's case holds what sdpa_flash measured: the flash backend pinned in
// place of cuDNN): the command says which kernels went and came, in each format.
class CliCompareKernels : public attnsweep::testing::CliTest {
 protected:
  CliCompareKernels() : CliTest("attnsweep-cli-compare-kernels") {}
};

TEST_F(CliCompareKernels, AnotherBackendPinnedListsItsKernels) {
  const std::string excerpt = std::string(ATTNSWEEP_SOURCE_DIR) + "/tests/data/h200_bench_excerpt.db";
  const std::string baseline = path("baseline.db"), candidate = path("flash-pinned.db");
  fs::copy_file(excerpt, baseline);
  fs::copy_file(excerpt, candidate);
  fs::permissions(candidate, fs::perms::owner_read | fs::perms::owner_write);
  SQLite::Database(candidate, SQLite::OPEN_READWRITE)
      .exec("DELETE FROM kernels WHERE case_id = 6; CREATE TEMP TABLE k AS SELECT * FROM kernels WHERE case_id = 5; "
            "UPDATE k SET case_id = 6; INSERT INTO kernels SELECT * FROM k; DELETE FROM samples WHERE case_id = 6; "
            "CREATE TEMP TABLE s AS SELECT * FROM samples WHERE case_id = 5; UPDATE s SET case_id = 6; "
            "INSERT INTO samples SELECT * FROM s; UPDATE cases SET sdpa_backend = 'flash_attention', "
            "memset_per_forward = 0 WHERE case_id = 6");
  const std::string cudnn = "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x64_4x1x1_"
                            "cga1x1x1_kernel0_0";

  const Outcome text = attnsweep::testing::run_attnsweep("compare " + baseline + " " + candidate);
  EXPECT_EQ(text.exit_code, 1) << text.output;
  EXPECT_NE(text.output.find("\nKernel differences (1 case; "), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("\nsdpa_cudnn 8x16x1024x64 bf16 causal cuda: 3 kernels (2 removed, 1 added, 0 "
                             "unchanged); kernel time 57.3 -> 93.8 us per pass\n"),
            std::string::npos)
      << text.output;
  EXPECT_NE(text.output.find("  added    flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4, false, ...>, ...>  "),
            std::string::npos)
      << text.output;
  EXPECT_NE(text.output.find("  removed  " + cudnn + "  1 -> 0    56.5     98.6%   [132,1,1]  [384,1,1]  168        "
                             "131.0       0%\n"),
            std::string::npos)
      << text.output;

  const Outcome markdown = attnsweep::testing::run_attnsweep("compare " + baseline + " " + candidate +
                                                             " --format markdown");
  EXPECT_EQ(markdown.exit_code, 1);
  EXPECT_NE(markdown.output.find("| added | flash_fwd_kernel\\<Flash_fwd_kernel_traits\\<64, 128, 128, 4, false, "
                                 "...>, ...> | 0 -> 1 | 93.8 | 100.0% | [8,8,16] | [128,1,1] | 255 | 48.0 | 13% |"),
            std::string::npos)
      << markdown.output;

  const Outcome json = attnsweep::testing::run_attnsweep("compare " + baseline + " " + candidate + " --format json");
  ASSERT_EQ(json.exit_code, 1);
  const nlohmann::json document = nlohmann::json::parse(json.output);
  EXPECT_EQ(document["summary"]["kernel_differences"], 1);
  const nlohmann::json& kernels = document["cases"][3]["kernel_differences"]["kernels"];
  EXPECT_EQ(document["cases"][3]["key"]["variant"], "sdpa_cudnn");
  ASSERT_EQ(kernels.size(), 3u);
  EXPECT_EQ(kernels[0]["name"].get<std::string>().rfind("void pytorch_flash::flash_fwd_kernel<", 0), 0u);
  EXPECT_EQ(kernels[1]["name"], cudnn);
  EXPECT_EQ(kernels[1]["baseline"]["shared_memory_bytes"], 134144);
}

}  // namespace
