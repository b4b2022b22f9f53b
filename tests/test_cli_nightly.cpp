// `attnsweep nightly` end to end on the CPU: a first night that only becomes
// the baseline, a second night compared with it through the history folder, a
// planted slowdown (the test-only ATTNSWEEP_TEST_SLOWDOWN knob) caught against
// a pinned baseline with exit 1, and bad input refused with exit 2 before
// anything runs.
#include <gtest/gtest.h>

#include <SQLiteCpp/SQLiteCpp.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/common/sha256.hpp"
#include "tests/support/cli_output_checks.hpp"
#include "tests/support/cli_test.hpp"
#include "tests/support/run_attnsweep.hpp"
#include "tests/support/tiny_nightly.hpp"

namespace {

namespace fs = std::filesystem;

using attnsweep::testing::Outcome;

const char* const kNightlyConfig = attnsweep::testing::kTinyNightlyConfig;

std::vector<std::string> files_in(const std::string& folder) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(folder)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::string read(const std::string& path) { return attnsweep::testing::read_file(path); }

using attnsweep::testing::contains;
using attnsweep::testing::contains_each;

class CliNightly : public attnsweep::testing::CliTest {
 protected:
  CliNightly() : CliTest("attnsweep-cli-nightly") {}
  Outcome nightly(const std::string& arguments, const std::string& environment = "") const {
    return attnsweep::testing::run_attnsweep("--log-level off nightly " + config_ + " " + arguments,
                                             "OMP_NUM_THREADS=1 " + environment);
  }

  std::string config_ = write("nightly.yaml", kNightlyConfig);
};

TEST_F(CliNightly, AFirstNightBecomesTheBaselineAndTheSecondIsComparedWithIt) {
  const std::string history = path("history");
  const Outcome first = nightly("--history " + history + " --db " + path("n1.db") + " --threshold 99");
  ASSERT_EQ(first.exit_code, 0) << first.output;
  EXPECT_TRUE(contains(first.output, "tonight's run is the first baseline; nothing was compared")) << first.output;
  EXPECT_TRUE(contains(first.output, "nightly: no regression")) << first.output;
  const std::vector<std::string> after_first = files_in(history);
  ASSERT_EQ(after_first.size(), 2u);  // nightly-<stamp>.db and .md
  EXPECT_EQ(after_first[0].size(), std::string("nightly-20261201T052838Z.db").size()) << after_first[0];
  EXPECT_EQ(after_first[0].substr(after_first[0].size() - 3), ".db");
  EXPECT_EQ(after_first[1].substr(after_first[1].size() - 3), ".md");
  // The local summary and the history's copy say the same.
  EXPECT_EQ(read(path("n1.md")), read(history + "/" + after_first[1]));
  // The history's database is one whole file with the run, done.
  EXPECT_FALSE(fs::exists(history + "/" + after_first[0] + "-wal"));
  {
    SQLite::Database db(history + "/" + after_first[0], SQLite::OPEN_READONLY);
    EXPECT_EQ(db.execAndGet("SELECT status || ' ' || count(*) FROM runs").getString(), "done 1");
    EXPECT_EQ(db.execAndGet("SELECT count(*) FROM cases WHERE status = 'ok'").getInt(), 2);
  }

  // A stamp has one-second resolution: the second night must not share the first's.
  ::sleep(1);
  const Outcome second = nightly("--history " + history + " --db " + path("n2.db") + " --threshold 99");
  ASSERT_EQ(second.exit_code, 0) << second.output;
  EXPECT_TRUE(contains(second.output, "- baseline: `" + history + "/" + after_first[0] + " run 1 (started "))
      << second.output;
  EXPECT_TRUE(contains(second.output, "attnsweep compare: 0 regressions")) << second.output;
  EXPECT_TRUE(contains(second.output, "| cases matched | 2 |")) << second.output;
  EXPECT_EQ(files_in(history).size(), 4u);
  // Tonight's local database is one closed file too (issue 33, item 15): no -wal or -shm beside it.
  for (const std::string& db : {path("n1.db"), path("n2.db")}) {
    for (const char* suffix : {"-wal", "-shm"}) EXPECT_FALSE(fs::exists(db + suffix)) << db + suffix;
  }
}

TEST_F(CliNightly, APlantedSlowdownAgainstAPinnedBaselineExitsOne) {
  const std::string baseline = path("baseline.db");
  const Outcome pinned =
      attnsweep::testing::run_attnsweep("--log-level off run " + config_ + " --db " + baseline, "OMP_NUM_THREADS=1 ");
  ASSERT_EQ(pinned.exit_code, 0) << pinned.output;
  const Outcome slowed = nightly("--baseline " + baseline + ":1 --db " + path("slow.db") + " --threshold 99",
                                 "ATTNSWEEP_TEST_SLOWDOWN=naive:8 ");
  EXPECT_EQ(slowed.exit_code, 1) << slowed.output;
  // The slowed variant is the one named, as SLOWER; the other variant is not a finding.
  // The knob is part of the environment the summary shows first.
  EXPECT_TRUE(contains_each(slowed.output, {"nightly: REGRESSION (exit 1)",
                                            "attnsweep compare: 1 regression",
                                            "| naive 1x4x256x32 fp32 causal cpu | time |",
                                            "SLOWER",
                                            "env_vars.ATTNSWEEP_TEST_SLOWDOWN"}));
  EXPECT_FALSE(contains(slowed.output, "| sdpa_math 1x4x256x32")) << slowed.output;
  // The summary file holds what was printed; the pinned baseline is untouched.
  EXPECT_TRUE(contains(read(path("slow.md")), "attnsweep compare: 1 regression"));
  SQLite::Database db(baseline, SQLite::OPEN_READONLY);
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM runs").getInt(), 1);
}

// Issue 38, held out on the H200: a night run with PYTORCH_NO_CUDA_MEMORY_CACHING=1 (an environment
// slip) passed with most cases suspect. A fact that moves times makes the night INCONCLUSIVE (exit 4),
// its reason before anything else in the summary, in the last line and in the JSON summary.
TEST_F(CliNightly, AnEnvironmentSlipThatMovesTimesIsInconclusiveWithItsReasonFirst) {
  const std::string baseline = path("baseline.db");
  const Outcome pinned =
      attnsweep::testing::run_attnsweep("--log-level off run " + config_ + " --db " + baseline, "OMP_NUM_THREADS=1 ");
  ASSERT_EQ(pinned.exit_code, 0) << pinned.output;
  const Outcome same = nightly("--baseline " + baseline + ":1 --db " + path("same.db") + " --threshold 99 --summary-json " +
                               path("same.json"));
  ASSERT_EQ(same.exit_code, 0) << same.output;
  const auto passed = nlohmann::json::parse(read(path("same.json")));
  EXPECT_EQ(passed["format"], "attnsweep-nightly/1");
  EXPECT_EQ(passed["verdict"], "pass") << passed.dump(2);
  EXPECT_EQ(passed["exit_code"], 0);
  EXPECT_EQ(passed["reasons"].size(), 0u);
  EXPECT_EQ(passed["timed_on_both"], 2);
  EXPECT_EQ(passed["judged_on_time"], 2);
  EXPECT_EQ(passed["comparison"]["summary"]["regressions"], 0) << passed["comparison"].dump(2).substr(0, 2000);

  const Outcome slipped = nightly("--baseline " + baseline + ":1 --db " + path("slip.db") + " --threshold 99 --summary-json " +
                                  path("slip.json"),
                                  "PYTORCH_NO_CUDA_MEMORY_CACHING=1 ");
  EXPECT_EQ(slipped.exit_code, 4) << slipped.output;
  const std::string reason =
      "the environment changed in a fact that moves times: env_vars.PYTORCH_NO_CUDA_MEMORY_CACHING (unset) -> 1";
  EXPECT_TRUE(contains(slipped.output, "nightly: INCONCLUSIVE (exit 4): " + reason)) << slipped.output;
  const std::string summary = read(path("slip.md"));
  const auto headline = summary.find("**INCONCLUSIVE: this night is no pass**");
  ASSERT_NE(headline, std::string::npos) << summary;
  // The reason, before the baseline's line.
  const auto reason_line = summary.find("- " + reason + "\n");
  ASSERT_NE(reason_line, std::string::npos) << summary;
  EXPECT_LT(headline, reason_line);
  EXPECT_LT(reason_line, summary.find("- baseline:")) << summary;
  const auto json = nlohmann::json::parse(read(path("slip.json")));
  EXPECT_EQ(json["verdict"], "inconclusive");
  EXPECT_EQ(json["exit_code"], 4);
  ASSERT_EQ(json["reasons"].size(), 1u) << json["reasons"];
  EXPECT_EQ(json["reasons"][0], reason);
  EXPECT_EQ(json["database"], path("slip.db"));
}

// Issue 38: the JSON summary a CI job reads instead of the markdown: every flagged case with its numbers and why.
TEST_F(CliNightly, TheJsonSummaryNamesEachFlaggedCaseWithItsNumbers) {
  const std::string baseline = path("baseline.db");
  ASSERT_EQ(attnsweep::testing::run_attnsweep("--log-level off run " + config_ + " --db " + baseline, "OMP_NUM_THREADS=1 ")
                .exit_code,
            0);
  const Outcome slowed = nightly("--baseline " + baseline + ":1 --db " + path("slow.db") + " --threshold 99 --summary-json " +
                                 path("slow.json"),
                                 "ATTNSWEEP_TEST_SLOWDOWN=naive:8 ");
  EXPECT_EQ(slowed.exit_code, 1) << slowed.output;
  EXPECT_TRUE(contains(slowed.output, "summary JSON: " + path("slow.json"))) << slowed.output;
  const auto json = nlohmann::json::parse(read(path("slow.json")));
  EXPECT_EQ(json["verdict"], "regression");
  EXPECT_EQ(json["exit_code"], 1);
  EXPECT_EQ(json["status"], "done");
  ASSERT_EQ(json["flagged"].size(), 1u) << json["flagged"].dump(2);
  const auto& flagged = json["flagged"][0];
  EXPECT_EQ(flagged["case"].get<std::string>().rfind("naive 1x4x256x32 fp32 causal", 0), 0u) << flagged;
  EXPECT_EQ(flagged["kind"], "regression");
  EXPECT_EQ(flagged["time_verdict"], "SLOWER");
  EXPECT_GT(flagged["ratio"].get<double>(), 2.0) << flagged;
  EXPECT_NEAR(flagged["ratio"].get<double>(),
              flagged["tonight_median_us"].get<double>() / flagged["baseline_median_us"].get<double>(), 1e-6);
  ASSERT_GE(flagged["reasons"].size(), 1u);
  EXPECT_EQ(flagged["reasons"][0]["check"], "time");
  EXPECT_TRUE(contains(flagged["reasons"][0]["detail"].get<std::string>(), "SLOWER")) << flagged;
}

TEST_F(CliNightly, BadInputIsOneLineAndExitTwoAndNothingRuns) {
  const std::string history = path("history");
  struct Bad {
    std::string arguments, message;
  };
  write("not-a-folder", "x");
  const std::vector<Bad> bad = {
      {"--db " + path("x.db"), "nightly needs exactly one of --history DIR"},
      {"--history " + history + " --baseline " + path("b.db") + " --db " + path("x.db"), "--history excludes --baseline"},
      {"--baseline " + path("missing.db") + " --db " + path("x.db"), "--baseline: " + path("missing.db") + ": database not found"},
      {"--baseline " + path("missing.db") + ":x --db " + path("x.db"), "is not a run id"},
      {"--history " + path("not-a-folder") + " --db " + path("x.db"), "--history must be a folder"},
      {"--history " + history + " --threshold 0 --db " + path("x.db"), "--threshold: invalid value '0'"},
      {"--history " + history + " --db " + path("x.db") + " --summary-json " + path("x.db"),
       "--summary-json " + path("x.db") + ": is the night's database (--db)"},
      {"--history " + history + " --db " + path("x.db") + " --summary-json " + path("x.md"),
       "is the markdown summary (--summary)"},
      {"--history " + history + " --db " + path("x.db") + " --summary-json " + path(""),
       "--summary-json " + path("") + ": is a folder; name a file in it"},
      {"--history " + history + " --db " + path("x.db") + " --summary-json " + path("no/such/folder/n.json"),
       "--summary-json"},
  };
  for (const auto& [arguments, message] : bad) {
    SCOPED_TRACE(arguments);
    const Outcome outcome = nightly(arguments);
    EXPECT_EQ(outcome.exit_code, 2) << outcome.output;
    EXPECT_TRUE(contains(outcome.output, message)) << outcome.output;
    EXPECT_EQ(std::count(outcome.output.begin(), outcome.output.end(), '\n'), 1) << outcome.output;
    EXPECT_FALSE(fs::exists(path("x.db"))) << "a sweep ran";
    EXPECT_FALSE(fs::exists(history)) << "the history folder was created for a night that never ran";
  }
}

std::string file_hash(const std::string& file) { return attnsweep::sha256_hex(read(file)); }

std::size_t lines_of(const std::string& text) { return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')); }

// A database of one finished run of `config`, checkpointed into one file.
void run_into(const std::string& config, const std::string& db) {
  const Outcome outcome =
      attnsweep::testing::run_attnsweep("--log-level off run " + config + " --db " + db, "OMP_NUM_THREADS=1 ");
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  SQLite::Database(db, SQLite::OPEN_READWRITE).exec("PRAGMA wal_checkpoint(TRUNCATE)");
}

// A copy of the finished run in `db` stored as `history`/nightly-`stamp`.db, its run started at `started_at`.
void plant_night(const std::string& db, const std::string& history, const std::string& stamp,
                 const std::string& started_at) {
  const std::string night = history + "/nightly-" + stamp + ".db";
  fs::copy_file(db, night);
  SQLite::Database(night, SQLite::OPEN_READWRITE)
      .exec("UPDATE runs SET started_at = '" + started_at + "'; PRAGMA wal_checkpoint(TRUNCATE)");
}

TEST_F(CliNightly, RefusesInputThatWouldOnlyFailAfterTheSweep) {
  // A bad config (or device) with --history: refused, and the history folder is not created for it.
  const std::string bad_config = write("bad.yaml", "name: [\n");
  const Outcome bad = attnsweep::testing::run_attnsweep(
      "--log-level off nightly " + bad_config + " --history " + path("new-history") + " --db " + path("x.db"));
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_FALSE(fs::exists(path("new-history")));

  write("a-file", "x");
  struct Bad {
    std::string arguments, message;
  };
  const std::vector<Bad> refused = {
      // The summary's folder is missing: it used to be found out after the whole sweep (exit 1).
      {"--history " + path("h1") + " --db " + path("x.db") + " --summary " + path("missing/x.md"),
       "--summary: " + path("missing") + ": no such folder"},
      {"--history " + path("h1") + " --db " + path("x.db") + " --summary " + path("a-file/x.md"), "is not a folder"},
      {"--history " + path("h1") + " --db " + path("x.db") + " --summary " + path("."), "is a folder"},
      // --db in the history folder: SQLite would run there (a bucket mount), or append to a stored night.
      {"--history " + path("") + " --db " + path("x.db"), "is in the --history folder"},
      // A history that cannot be created: its nearest folder is a file.
      {"--history " + path("a-file/history") + " --db " + path("x.db"), "--history"},
      // The default summary of --db x.md is x.md itself: it would overwrite the database.
      {"--history " + path("h1") + " --db " + path("x.md"), "--summary " + path("x.md") + ": is the night's database (--db)"},
  };
  for (const auto& [arguments, message] : refused) {
    SCOPED_TRACE(arguments);
    const Outcome outcome = nightly(arguments);
    EXPECT_EQ(outcome.exit_code, 2) << outcome.output;
    EXPECT_NE(outcome.output.find(message), std::string::npos) << outcome.output;
    EXPECT_EQ(lines_of(outcome.output), 1u) << outcome.output;
    EXPECT_FALSE(fs::exists(path("x.db"))) << "a sweep ran";
    EXPECT_FALSE(fs::exists(path("x.md"))) << "a sweep ran";
  }
}

// Issue 33, item 3: the summary is optional, the night is not. A summary that
// cannot be written (its disk full: /dev/full gives ENOSPC) used to end nightly
// before the copies into the history ("cannot write the nightly summary", no
// reason, the history not even created). The night is stored and copied all the
// same, the history's summary is the text; exit 1 names the system's reason.
TEST_F(CliNightly, ASummaryThatCannotBeWrittenStillStoresTheNight) {
  const std::string history = path("history");
  const std::string summary = path("full.md");
  fs::create_symlink("/dev/full", summary);
  const Outcome outcome =
      nightly("--history " + history + " --db " + path("n.db") + " --summary " + summary + " --threshold 99");
  EXPECT_EQ(outcome.exit_code, 1) << outcome.output;
  EXPECT_TRUE(contains(outcome.output, "error: --summary " + summary + ": cannot write to it: No space left on device"))
      << outcome.output;
  EXPECT_TRUE(contains(outcome.output, "tonight's run is the first baseline")) << outcome.output;  // printed all the same
  ASSERT_TRUE(fs::is_directory(history)) << outcome.output;
  const std::vector<std::string> stored = files_in(history);
  ASSERT_EQ(stored.size(), 2u) << outcome.output;
  EXPECT_TRUE(contains(outcome.output, "history: " + history + "/" + stored[0])) << outcome.output;
  EXPECT_TRUE(contains(read(history + "/" + stored[1]), "tonight's run is the first baseline"));
  {
    SQLite::Database db(history + "/" + stored[0], SQLite::OPEN_READONLY);
    EXPECT_EQ(db.execAndGet("SELECT status || ' ' || count(*) FROM runs").getString(), "done 1");
  }
  EXPECT_TRUE(fs::is_symlink(summary)) << "the link to /dev/full was replaced";
  // The next night finds it as its baseline.
  ::sleep(1);
  const Outcome next = nightly("--history " + history + " --db " + path("n2.db") + " --threshold 99");
  EXPECT_EQ(next.exit_code, 0) << next.output;
  EXPECT_TRUE(contains(next.output, "- baseline: `" + history + "/" + stored[0] + " run 1")) << next.output;
}

TEST_F(CliNightly, TheBaselineIsOnlyRead) {
  const std::string baseline = path("baseline.db");
  run_into(config_, baseline);
  const std::string before = file_hash(baseline);
  // --db the baseline itself: tonight's run would go into the pinned file, and the
  // baseline (its latest run, resolved after the sweep) would be tonight's run: a
  // night compared with itself, which can never regress.
  for (const std::string& arguments :
       {"--baseline " + baseline + " --db " + baseline, "--baseline " + baseline + ":1 --db " + baseline,
        "--baseline " + baseline + " --db " + path("x.db") + " --summary " + baseline}) {
    SCOPED_TRACE(arguments);
    const Outcome outcome = nightly(arguments + " --threshold 99");
    EXPECT_EQ(outcome.exit_code, 2) << outcome.output;
    EXPECT_NE(outcome.output.find("--baseline"), std::string::npos) << outcome.output;
    EXPECT_EQ(lines_of(outcome.output), 1u) << outcome.output;
    EXPECT_EQ(file_hash(baseline), before) << "the pinned baseline changed";
    EXPECT_FALSE(fs::exists(path("x.db")));
  }
}

TEST_F(CliNightly, ANightThatMatchesNoCaseOfTheBaselineFails) {
  // The baseline measured other shapes (or ran on another kind of device): nothing
  // can be compared, which must not pass as "no regression".
  std::string other_config = kNightlyConfig;
  other_config.replace(other_config.find("seq_len: 256"), 12, "seq_len: 128");
  const std::string other = write("other.yaml", other_config);
  const std::string baseline = path("other.db");
  run_into(other, baseline);
  const Outcome outcome = nightly("--baseline " + baseline + " --db " + path("n.db") + " --threshold 99");
  EXPECT_EQ(outcome.exit_code, 1) << outcome.output;
  EXPECT_TRUE(contains(outcome.output, "nothing was compared")) << outcome.output;
  EXPECT_FALSE(contains(outcome.output, "nightly: no regression")) << outcome.output;
  EXPECT_TRUE(contains(read(path("n.md")), "nothing was compared"));
}

// Issue 23: a baseline of the same cases timed as another pass has no case in
// common with tonight's forwards; a backward night is compared with a backward baseline.
TEST_F(CliNightly, ABaselineOfAnotherPassIsNotComparedAndABackwardNightIsComparedWithItsOwnPass) {
  const std::string baseline = path("backward.db");
  run_into(config_, baseline);
  { SQLite::Database(baseline, SQLite::OPEN_READWRITE).exec("UPDATE cases SET pass = 'backward'"); }
  const Outcome outcome = nightly("--baseline " + baseline + " --db " + path("n.db") + " --threshold 99");
  EXPECT_EQ(outcome.exit_code, 1) << outcome.output;
  EXPECT_TRUE(contains(outcome.output, "nothing was compared")) << outcome.output;

  const std::string backward = write("backward.yaml", std::string(kNightlyConfig) + "passes: [backward]\n");
  const std::string backward_baseline = path("backward-baseline.db");
  run_into(backward, backward_baseline);
  const Outcome night = attnsweep::testing::run_attnsweep("--log-level off nightly " + backward + " --baseline " +
                                                              backward_baseline + " --db " + path("b.db") +
                                                              " --threshold 99",
                                                          "OMP_NUM_THREADS=1 ");
  EXPECT_EQ(night.exit_code, 0) << night.output;
  EXPECT_TRUE(contains(night.output, "nightly: no regression")) << night.output;
  EXPECT_FALSE(contains(night.output, "nothing was compared")) << night.output;
  SQLite::Database db(path("b.db"));
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM cases WHERE pass = 'backward' AND status = 'ok'").getInt(), 2);
}

TEST_F(CliNightly, UnreadableNightsInTheHistoryAreSkippedByTheirHistoryName) {
  const std::string history = path("history");
  fs::create_directories(history);
  run_into(config_, path("real.db"));
  plant_night(path("real.db"), history, "20261130T031500Z", "2026-11-30T03:15:01Z");
  const std::string good_hash = file_hash(history + "/nightly-20261130T031500Z.db");
  write("history/nightly-20261202T000000Z.db", "garbage\n");
  write("history/nightly-20261201T000000Z.db", "");
  fs::create_directories(history + "/nightly-20261130T120000Z.db");  // a folder of that name
  const Outcome outcome = nightly("--history " + history + " --db " + path("n.db") + " --threshold 99");
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  EXPECT_TRUE(contains(outcome.output, "- baseline: `" + history + "/nightly-20261130T031500Z.db run 1")) << outcome.output;
  EXPECT_TRUE(contains(outcome.output, "skipped nightly-20261202T000000Z.db: " + history +
                                           "/nightly-20261202T000000Z.db: cannot read as a results database"))
      << outcome.output;
  EXPECT_TRUE(contains(outcome.output, "skipped nightly-20261201T000000Z.db: ")) << outcome.output;
  // The scratch copy's path and run's advice about --db mean nothing to a reader of the summary.
  EXPECT_FALSE(contains(outcome.output, "attnsweep-nightly-")) << outcome.output;
  EXPECT_FALSE(contains(outcome.output, "choose another --db")) << outcome.output;
  EXPECT_EQ(file_hash(history + "/nightly-20261130T031500Z.db"), good_hash);
  EXPECT_EQ(read(history + "/nightly-20261202T000000Z.db"), "garbage\n");
}

// Issue 33, item 5: a night is chosen by its stamp, which is a time: a valid UTC
// time, not after tonight, and the time its run started. A copy named
// nightly-20991231T235959Z.db used to be the baseline of every later night (the
// newest name), and so did a month 13 and a copy under a later night's name.
TEST_F(CliNightly, NightsStampedInTheFutureOrOffTheirRunAreNoBaseline) {
  const std::string history = path("history");
  fs::create_directories(history);
  const std::string real = path("real.db");
  run_into(config_, real);
  plant_night(real, history, "20261202T031500Z", "2026-12-02T03:15:02Z");
  plant_night(real, history, "20991231T235959Z", "2099-12-31T23:59:59Z");
  plant_night(real, history, "20261301T000000Z", "2026-12-02T03:15:02Z");
  plant_night(real, history, "20261202T120000Z", "2026-12-02T03:15:02Z");
  const Outcome outcome = nightly("--history " + history + " --db " + path("n.db") + " --threshold 99");
  EXPECT_EQ(outcome.exit_code, 0) << outcome.output;
  EXPECT_TRUE(contains(outcome.output, "- baseline: `" + history + "/nightly-20261202T031500Z.db run 1")) << outcome.output;
  EXPECT_TRUE(contains(outcome.output, "- time window: 1 good night (nightly-20261202T031500Z.db)")) << outcome.output;
  attnsweep::testing::expect_bad_night_stamps_skipped(outcome.output, "", "20261202T120000Z", "2026-12-02T03:15:02Z");
}

TEST_F(CliNightly, TheBaselineIsTheNewestNightOnTonightsKindOfDevice) {
  // A night that fell back to another kind of device (the GPU was gone: device auto ran
  // on the CPU) shares no case with tonight's. It fails its own night; it must not be
  // the baseline of the next one too.
  const std::string history = path("history");
  fs::create_directories(history);
  run_into(config_, path("real.db"));
  plant_night(path("real.db"), history, "20261129T031500Z", "2026-11-29T03:15:01Z");
  const std::string other = history + "/nightly-20261130T031500Z.db";
  plant_night(path("real.db"), history, "20261130T031500Z", "2026-11-30T03:15:01Z");
  SQLite::Database(other, SQLite::OPEN_READWRITE)
      .exec("UPDATE runs SET device = 'cuda:0'; UPDATE cases SET device = 'cuda:0'; PRAGMA wal_checkpoint(TRUNCATE)");
  const Outcome outcome = nightly("--history " + history + " --db " + path("n.db") + " --threshold 99");
  EXPECT_EQ(outcome.exit_code, 0) << outcome.output;
  EXPECT_TRUE(contains(outcome.output, "- baseline: `" + history + "/nightly-20261129T031500Z.db run 1")) << outcome.output;
  EXPECT_TRUE(contains(outcome.output, "skipped nightly-20261130T031500Z.db: it ran on cuda:0, tonight on cpu"))
      << outcome.output;
  EXPECT_TRUE(contains(outcome.output, "| cases matched | 2 |")) << outcome.output;
}

TEST_F(CliNightly, ANightOfTheOlderSchemaIsComparedThroughAMigratedCopy) {
  // The first night after an upgrade of attnsweep: last night's file is of schema 6.
  // It is read through a migrated copy (the history's file is never changed) instead
  // of being skipped, which made the night "the first baseline" and compare nothing.
  const std::string history = path("history");
  fs::create_directories(history);
  const std::string old_night = history + "/nightly-20261201T024846Z.db";  // its run's started_at
  fs::copy_file(std::string(ATTNSWEEP_SOURCE_DIR) + "/tests/data/schema_v6.db", old_night);
  const std::string before = file_hash(old_night);
  const Outcome outcome = nightly("--history " + history + " --db " + path("n.db") + " --threshold 99");
  EXPECT_TRUE(contains(outcome.output, "- baseline: `" + old_night + " run 1")) << outcome.output;
  EXPECT_FALSE(contains(outcome.output, "first baseline")) << outcome.output;
  EXPECT_EQ(file_hash(old_night), before) << "the history's night changed";
}

TEST_F(CliNightly, AnInterruptedNightIsCopiedAndFails) {
  // Long enough to be interrupted: SIGINT after 5 s stops it at the next sample.
  const std::string slow = write(
      "slow.yaml", "name: slow\ndevice: cpu\nvariants: [naive, sdpa_math]\ndtypes: [fp32]\n"
                   "shapes: {batch: 1, heads: 4, seq_len: 256, head_dim: 32}\n"
                   "measure: {warmup: 1, profiled_forwards: 1, min_samples: 1000000, max_samples: 1000000, "
                   "max_case_seconds: 600}\n");
  const std::string history = path("history");
  const Outcome outcome = attnsweep::testing::run_attnsweep(
      "--log-level off nightly " + slow + " --history " + history + " --db " + path("n.db"),
      "OMP_NUM_THREADS=1 timeout --preserve-status -s INT 5 ");
  EXPECT_EQ(outcome.exit_code, 1) << outcome.output;
  EXPECT_TRUE(contains_each(outcome.output, {"of 2 planned cases, status interrupted",
                                             "The night did not finish (interrupted)",
                                             "nightly: the run did not finish (interrupted)"}));
  ASSERT_EQ(files_in(history).size(), 2u) << outcome.output;
  SQLite::Database db(history + "/" + files_in(history)[0], SQLite::OPEN_READONLY);
  EXPECT_EQ(db.execAndGet("SELECT status FROM runs").getString(), "interrupted");
}

TEST_F(CliNightly, TheDefaultDatabaseNeverJoinsAnExistingFile) {
  // Two nights started in the same second in one folder would share nightly-<stamp>.db.
  // The files of the next seconds exist already (a copy of a real database): refused.
  const std::string folder = path("here");
  fs::create_directories(folder);
  const std::string existing = path("existing.db");
  run_into(config_, existing);
  const std::time_t now = std::time(nullptr);
  std::vector<std::string> planted;
  for (int second = 0; second < 30; ++second) {
    const std::time_t at = now + second;
    std::tm utc{};
    gmtime_r(&at, &utc);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &utc);
    planted.push_back(folder + "/nightly-" + stamp + ".db");
    fs::copy_file(existing, planted.back());
  }
  const std::string before = file_hash(planted.front());
  const Outcome outcome = attnsweep::testing::run_attnsweep(
      "--log-level off nightly " + config_ + " --history " + path("history") + " --threshold 99",
      "cd " + folder + " && OMP_NUM_THREADS=1 ");
  EXPECT_EQ(outcome.exit_code, 2) << outcome.output;
  EXPECT_TRUE(contains(outcome.output, "already exists")) << outcome.output;
  EXPECT_EQ(lines_of(outcome.output), 1u) << outcome.output;
  for (const std::string& file : planted) {
    SQLite::Database db(file, SQLite::OPEN_READONLY);
    EXPECT_EQ(db.execAndGet("SELECT count(*) FROM runs").getInt(), 1) << file;
  }
}

TEST_F(CliNightly, EnvPrintsValidJsonWhateverTheEnvironmentHolds) {
  // An environment variable that changes results, holding a byte that is not UTF-8.
  const Outcome outcome = attnsweep::testing::run_attnsweep("env --device cpu", "CUBLAS_TEST_BYTES=\"$(printf 'a\\377b')\" ");
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  const nlohmann::json json = nlohmann::json::parse(outcome.output);
  EXPECT_TRUE(json["env_vars"].contains("CUBLAS_TEST_BYTES")) << outcome.output;
}

TEST_F(CliNightly, EnvNamesTheCudaRuntimeEvenOnTheCpu) {
  // What an image's CUDA is, asked where there is no GPU (make image-test compares it with the label).
  const Outcome outcome = attnsweep::testing::run_attnsweep("env --device cpu");
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  const nlohmann::json json = nlohmann::json::parse(outcome.output);
  EXPECT_TRUE(json["cuda_version"].is_null()) << outcome.output;  // the run's CUDA: none on the CPU
  ASSERT_TRUE(json["cuda_runtime_version"].is_string()) << outcome.output;
  // The pinned torch wheel (2.11.0) is built for CUDA 13.0.
  EXPECT_EQ(json["cuda_runtime_version"].get<std::string>(), "13.0") << outcome.output;
}

}  // namespace
