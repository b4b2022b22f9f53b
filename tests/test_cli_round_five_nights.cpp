// Hardening round five (issue 55, docs/reliability.md "Hardening, round five"),
// the nightly side end to end on the CPU: outputs that never replace an input,
// `accept` (its file, the nights it takes, its patterns, its errors, its echo),
// an empty time window that is no verdict, stored text that reaches the
// terminal escaped, and an op library rebuilt during an --isolate run. Each
// test failed before its fix (the section says how).
#include <gtest/gtest.h>

#include <SQLiteCpp/SQLiteCpp.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/common/sha256.hpp"
#include "tests/support/cli_output_checks.hpp"
#include "tests/support/cli_run_cut_short.hpp"
#include "tests/support/cli_test.hpp"
#include "tests/support/example_op_copy.hpp"
#include "tests/support/run_attnsweep.hpp"
#include "tests/support/spawn_attnsweep.hpp"
#include "tests/support/tiny_nightly.hpp"

namespace {

namespace fs = std::filesystem;

using namespace attnsweep::testing;  // the CLI tests' support: Outcome, run_attnsweep, contains, ...

std::string read(const std::string& path) { return attnsweep::testing::read_file(path); }
std::string digest(const std::string& path) { return attnsweep::sha256_hex(read(path)); }
std::size_t lines_of(const std::string& text) { return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')); }

// The UTC stamp of a time, as nightly names its nights.
std::string stamp_of(std::time_t time) {
  char text[32];
  std::tm utc{};
  gmtime_r(&time, &utc);
  std::strftime(text, sizeof text, "%Y%m%dT%H%M%SZ", &utc);
  return text;
}

// A config of the example op library (a copy at `library`) over `axes` (dtypes, causal, shapes).
std::string example_op_config(const std::string& library, const std::string& axes) {
  return "name: op-library\ndevice: cpu\nvariants:\n  - name: example\n    kind: op_library\n"
         "    library: '" + library + "'\n    op: attnsweep_example::attention\n    causal: is_causal\n    scale: scale\n" +
         axes + "measure: {warmup: 1, profiled_forwards: 1, min_samples: 3, max_samples: 3}\n";
}

class CliRoundFiveNights : public attnsweep::testing::TinyNightlyTest {
 protected:
  CliRoundFiveNights() : TinyNightlyTest("attnsweep-round-five-nights") {}

  // The history's nights, oldest first.
  std::vector<std::string> nights() const {
    std::vector<std::string> found;
    for (const auto& entry : fs::directory_iterator(history_)) {
      const std::string name = entry.path().filename().string();
      if (name.rfind("nightly-", 0) == 0 && name.size() > 3 && name.substr(name.size() - 3) == ".db") found.push_back(name);
    }
    std::sort(found.begin(), found.end());
    return found;
  }
  Outcome accept(const std::string& arguments, const std::string& environment = "") const {
    return run_attnsweep("--log-level off accept " + history_ + " " + arguments, environment);
  }
  std::vector<std::string> acceptances() const {
    std::vector<std::string> found;
    for (const auto& entry : fs::directory_iterator(history_)) {
      const std::string name = entry.path().filename().string();
      if (name.rfind("accept-", 0) == 0) found.push_back(name);
    }
    return found;
  }
};

// Item 1 and 18: nightly's --summary and --summary-json were checked only
// against each other and --db. Before: each of these ran the night and the
// file was replaced by JSON or markdown (the pinned baseline gone, a stored
// night or acceptance lost, the config replaced), and a dangling link was
// written through. Now: the one rule of `report -o` for every output.
TEST_F(CliRoundFiveNights, NightlyOutputsNeverReplaceAnInput) {
  ASSERT_EQ(night().exit_code, 0);
  const std::string stored_night = history_ + "/" + nights().front();
  const std::string stored_summary = stored_night.substr(0, stored_night.size() - 3) + ".md";
  const std::string acceptance = write("history/accept-20200101T000000Z.json", "{\"kept\": true}\n");
  const std::string other_database = path("other.db");
  fs::copy_file(stored_night, other_database);
  ::symlink(path("nowhere/x.json").c_str(), path("dangling.json").c_str());
  const std::string baseline_run = "--baseline " + other_database;
  struct Attempt {
    std::string arguments, protected_file, message;
  };
  const std::vector<Attempt> attempts = {
      {baseline_run + " --summary-json " + other_database, other_database, "--summary-json " + other_database + ": is "},
      {baseline_run + " --summary " + other_database, other_database, "--summary " + other_database + ": is "},
      {"--history " + history_ + " --summary-json " + stored_night, stored_night, "--summary-json " + stored_night},
      {"--history " + history_ + " --summary-json " + stored_summary, stored_summary, "--summary-json " + stored_summary},
      {"--history " + history_ + " --summary-json " + acceptance, acceptance, "--summary-json " + acceptance},
      {"--history " + history_ + " --summary-json " + config_, config_, "--summary-json " + config_ + ": is the config"},
      {"--history " + history_ + " --summary " + config_, config_, "--summary " + config_ + ": is the config"},
      {"--history " + history_ + " --summary-json " + other_database, other_database, "is an SQLite database"},
  };
  for (const Attempt& attempt : attempts) {
    const std::string before = digest(attempt.protected_file);
    const Outcome refused = run_attnsweep("--log-level off nightly " + config_ + " --db " + path("tonight.db") + " " +
                                              attempt.arguments,
                                          "OMP_NUM_THREADS=1 ");
    EXPECT_EQ(refused.exit_code, 2) << attempt.arguments << "\n" << refused.output;
    EXPECT_TRUE(contains(refused.output, attempt.message)) << attempt.arguments << "\n" << refused.output;
    EXPECT_EQ(lines_of(refused.output), 1u) << refused.output;
    EXPECT_EQ(digest(attempt.protected_file), before) << attempt.arguments;
    EXPECT_FALSE(fs::exists(path("tonight.db"))) << attempt.arguments << ": the night ran";
  }
  // Item 18: a dangling link, for the JSON as for the markdown.
  for (const char* option : {"--summary-json", "--summary"}) {
    const Outcome refused = run_attnsweep("--log-level off nightly " + config_ + " --db " + path("tonight.db") + " " +
                                              baseline_run + " " + option + " " + path("dangling.json"),
                                          "OMP_NUM_THREADS=1 ");
    EXPECT_EQ(refused.exit_code, 2) << option << "\n" << refused.output;
    EXPECT_TRUE(contains(refused.output, "is a symbolic link to " + path("nowhere/x.json") + ", which does not exist"))
        << refused.output;
    EXPECT_FALSE(fs::exists(path("nowhere"))) << option;
    EXPECT_FALSE(fs::exists(path("tonight.db"))) << option << ": the night ran";
  }
}

// Item 2: `history DIR --html DIR/<file>` replaced an acceptance record or a
// stored summary of the folder it reads (only SQLite nights were refused).
TEST_F(CliRoundFiveNights, HistoryHtmlNeverReplacesAFileOfTheFolderItReads) {
  ASSERT_EQ(night().exit_code, 0);
  const std::string stored_night = history_ + "/" + nights().front();
  const std::string stored_summary = stored_night.substr(0, stored_night.size() - 3) + ".md";
  const std::string acceptance = write("history/accept-20200101T000000Z.json", "{\"kept\": true}\n");
  for (const std::string& page : {stored_summary, acceptance}) {
    const std::string before = digest(page);
    const Outcome refused = run_attnsweep("--log-level off history " + history_ + " --html " + page);
    EXPECT_EQ(refused.exit_code, 2) << refused.output;
    EXPECT_TRUE(contains(refused.output, "error: --html " + page + ": is ")) << refused.output;
    EXPECT_EQ(lines_of(refused.output), 1u) << refused.output;
    EXPECT_EQ(digest(page), before) << page;
  }
  // Nor a new file under a name the history reads: it would be a damaged night or acceptance ever after.
  for (const std::string& name : {"nightly-20200101T000000Z.db", "nightly-20200101T000000Z.md", "accept-x.json"}) {
    const Outcome refused = run_attnsweep("--log-level off history " + history_ + " --html " + history_ + "/" + name);
    EXPECT_EQ(refused.exit_code, 2) << refused.output;
    EXPECT_TRUE(contains(refused.output, ": is named as ")) << refused.output;
    EXPECT_FALSE(fs::exists(history_ + "/" + name)) << name;
  }
  // A page of its own in the folder is still written (and written again).
  for (int i = 0; i < 2; ++i) {
    const Outcome written = run_attnsweep("--log-level off history " + history_ + " --html " + history_ + "/index.html");
    EXPECT_EQ(written.exit_code, 0) << written.output;
  }
  EXPECT_TRUE(contains(read(history_ + "/index.html"), "<html")) << "no page";
}

// Item 3: accept wrote its record first to TMPDIR/attnsweep-accept-<UTC
// second>.json, through a symbolic link planted there: the link's target was
// replaced by the acceptance, even when the accept was then refused.
TEST_F(CliRoundFiveNights, AcceptWritesNothingOutsideTheHistoryFolder) {
  ASSERT_EQ(night().exit_code, 0);
  const std::string stamp = nights().front().substr(8, 16);
  fs::create_directories(path("tmp"));
  const std::string victim = write("victim.txt", "the user's own file\n");
  const std::time_t now = std::time(nullptr);
  for (std::time_t t = now - 2; t <= now + 30; ++t) {
    ::symlink(victim.c_str(), path("tmp/attnsweep-accept-" + stamp_of(t) + ".json").c_str());
  }
  const Outcome accepted = accept("--night " + stamp + " --cases 'naive *' --reason kept --by tester", "TMPDIR=" + path("tmp") + " ");
  EXPECT_EQ(accepted.exit_code, 0) << accepted.output;
  const Outcome refused = accept("--night " + stamp + " --cases 'naive *' --reason ''", "TMPDIR=" + path("tmp") + " ");
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_EQ(read(victim), "the user's own file\n");
  ASSERT_EQ(acceptances().size(), 1u);
  EXPECT_EQ(nlohmann::json::parse(read(history_ + "/" + acceptances().front()))["reason"], "kept");
}

// Item 4 (and 5's second half): a case suspect on every night of its window has
// no baseline: tonight's time is NOT_TIMED. Before: counted as judged and same,
// so an 8x slowdown on the first valid night was "nightly: no regression",
// exit 0, verdict pass. Now: not judged (listed, `unjudged` in the JSON), and
// the night inconclusive when under half of its cases are judged.
TEST_F(CliRoundFiveNights, AWindowOfSuspectNightsJudgesNothing) {
  for (int i = 0; i < 2; ++i) ASSERT_EQ(night().exit_code, 0);
  for (const std::string& stored : nights()) {
    SQLite::Database db(history_ + "/" + stored, SQLite::OPEN_READWRITE);
    db.exec("UPDATE cases SET validity = 'suspect', validity_reasons = 'level_shift: planted'");
  }
  const Outcome slow = night("ATTNSWEEP_TEST_SLOWDOWN=naive:8 ", "--threshold 99 --summary-json " + path("slow.json"));
  EXPECT_EQ(slow.exit_code, 4) << slow.output;
  EXPECT_TRUE(contains(slow.output, "nightly: INCONCLUSIVE")) << slow.output;
  EXPECT_TRUE(contains(slow.output, "only 0 of the 2 cases timed on both nights could be judged")) << slow.output;
  const auto json = nlohmann::json::parse(read(path("slow.json")));
  EXPECT_EQ(json["verdict"], "inconclusive");
  EXPECT_EQ(json["judged_on_time"], 0);
  ASSERT_EQ(json["unjudged"].size(), 2u) << json.dump(2).substr(0, 2000);
  EXPECT_TRUE(contains(json["unjudged"][0].get<std::string>(), ": no night of the window timed this case"))
      << json["unjudged"];
}

// Item 5: accept checked only that a file of the night's name existed. A night
// nightly skips (stamped in the future, off its run, unreadable, unfinished)
// could be accepted, and its cases were then never judged again. Now refused
// with nightly's own reason; and an acceptance whose window holds no good night
// leaves its cases not judged.
TEST_F(CliRoundFiveNights, AcceptTakesOnlyANightNightlyWouldJudgeWith) {
  ASSERT_EQ(night().exit_code, 0);
  const std::string good = history_ + "/" + nights().front();
  const std::string off_run = stamp_of(std::time(nullptr) - 3 * 24 * 3600);
  fs::copy_file(good, history_ + "/nightly-20991231T235959Z.db");
  fs::copy_file(good, history_ + "/nightly-" + off_run + ".db");
  const std::string unfinished = stamp_of(std::time(nullptr) - 5);
  fs::copy_file(good, history_ + "/nightly-" + unfinished + ".db");
  {
    SQLite::Database db(history_ + "/nightly-" + unfinished + ".db", SQLite::OPEN_READWRITE);
    db.exec("UPDATE runs SET status = 'interrupted', started_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now', '-4 seconds')");
  }
  const std::string unreadable = stamp_of(std::time(nullptr) - 7);
  write("history/nightly-" + unreadable + ".db", "not a database");
  const std::vector<std::pair<std::string, std::string>> refusals = {
      {"20991231T235959Z", "its name's stamp 20991231T235959Z is in the future"},
      {off_run, "its run started at "},
      {unfinished, "its latest run is interrupted"},
      {unreadable, "nightly-" + unreadable + ".db"},
  };
  for (const auto& [stamp, reason] : refusals) {
    const Outcome refused = accept("--night " + stamp + " --cases 'naive *' --reason kept");
    EXPECT_EQ(refused.exit_code, 2) << stamp << "\n" << refused.output;
    EXPECT_TRUE(contains(refused.output, "--night: nightly-" + stamp + ".db is a night nightly skips: ")) << refused.output;
    EXPECT_TRUE(contains(refused.output, reason)) << refused.output;
    EXPECT_EQ(lines_of(refused.output), 1u) << refused.output;
  }
  EXPECT_TRUE(acceptances().empty());
  // An acceptance planted by hand for a night that is no good night: the cases it
  // covers have no window left, so they are not judged (before: judged "same").
  write("history/accept-20200101T000000Z.json",
        "{\"format\": \"attnsweep-accept/1\", \"night\": \"20991231T235959Z\", \"cases\": [\"*\"], "
        "\"reason\": \"planted\", \"by\": \"x\", \"at\": \"2020-01-01T00:00:00Z\"}\n");
  const Outcome slow = night("ATTNSWEEP_TEST_SLOWDOWN=naive:8 ", "--threshold 99 --summary-json " + path("slow.json"));
  EXPECT_EQ(slow.exit_code, 4) << slow.output;
  const auto json = nlohmann::json::parse(read(path("slow.json")));
  EXPECT_EQ(json["verdict"], "inconclusive") << json.dump(2).substr(0, 2000);
  EXPECT_EQ(json["unjudged"].size(), 2u);
}

// Item 12: accept onto a history that cannot take the file was exit 2 ("bad
// input") with a hint about another acceptance this second. Now exit 1 with the
// system's reason (here the history on a read-only mount, made in a mount
// namespace: root only, skipped elsewhere).
TEST_F(CliRoundFiveNights, AnAcceptThatCannotWriteIsARuntimeFailureWithTheSystemsReason) {
  ASSERT_EQ(night().exit_code, 0);
  const std::string stamp = nights().front().substr(8, 16);
  const std::string read_only = "mount --bind " + history_ + " " + history_ + " && mount -o remount,ro,bind " + history_;
  if (std::system(("unshare -m sh -c '" + read_only + "' > /dev/null 2>&1").c_str()) != 0) {
    GTEST_SKIP() << "cannot mount a folder read-only here";
  }
  // run_attnsweep puts its "environment" before the binary: here the namespace and the mount, the binary exec'd last.
  const Outcome failed = run_attnsweep(
      "--log-level off accept " + history_ + " --night " + stamp + " --cases \"naive *\" --reason kept'",
      "unshare -m sh -c '" + read_only + " && exec ");
  EXPECT_EQ(failed.exit_code, 1) << failed.output;
  EXPECT_TRUE(contains(failed.output, "Read-only file system")) << failed.output;
  EXPECT_FALSE(contains(failed.output, "another acceptance this second")) << failed.output;
  EXPECT_EQ(lines_of(failed.output), 1u) << failed.output;
  EXPECT_TRUE(acceptances().empty());
}

// Item 13 (accept's part): `accept --cases 'nomatch *'` was recorded and never
// mentioned again. Now a pattern that matches no case of its night is refused.
TEST_F(CliRoundFiveNights, AnAcceptancePatternThatMatchesNoCaseOfItsNightIsRefused) {
  ASSERT_EQ(night().exit_code, 0);
  const std::string stamp = nights().front().substr(8, 16);
  const Outcome refused = accept("--night " + stamp + " --cases 'naive *' --cases 'nomatch *' --reason kept");
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_TRUE(contains(refused.output, "--cases: 'nomatch *' matches no case of night " + stamp +
                                           " (its cases are named like 'naive 1x4x256x32 fp32 causal cpu')"))
      << refused.output;
  EXPECT_EQ(lines_of(refused.output), 1u) << refused.output;
  EXPECT_TRUE(acceptances().empty());
}

// Item 14 (the acceptance part): a damaged acceptance record was skipped with the
// config reader's words ("save the config as a YAML file").
TEST_F(CliRoundFiveNights, ADamagedAcceptanceIsSkippedInItsOwnWords) {
  ASSERT_EQ(night().exit_code, 0);
  write("history/accept-20200101T000000Z.json", std::string("\xff\xfe{ not json", 11));
  write("history/accept-20200102T000000Z.json", "{\"format\": \"attnsweep-accept/1\", \"night\": 5}\n");
  fs::create_directories(history_ + "/accept-20200104T000000Z.json");  // read before by the config reader
  const Outcome shown = run_attnsweep("--log-level off history " + history_);
  ASSERT_EQ(shown.exit_code, 0) << shown.output;
  EXPECT_FALSE(contains(shown.output, "YAML")) << shown.output;
  EXPECT_TRUE(contains(shown.output, "history: skipped accept-20200101T000000Z.json: not an acceptance (not JSON: "))
      << shown.output;
  EXPECT_TRUE(contains(shown.output, "history: skipped accept-20200102T000000Z.json: not an acceptance (its night is not "
                                     "a stamp)"))
      << shown.output;
  EXPECT_TRUE(contains(shown.output, "history: skipped accept-20200104T000000Z.json: not an acceptance (not a regular "
                                     "file)"))
      << shown.output;
}

// Item 17 (accept's and history's part): --reason and --by were echoed raw, and
// history printed a record's text and a planted file's name raw: newlines, ESC
// sequences and bidi controls reached the terminal.
TEST_F(CliRoundFiveNights, StoredAndGivenTextReachesTheTerminalEscaped) {
  ASSERT_EQ(night().exit_code, 0);
  const std::string stamp = nights().front().substr(8, 16);
  const Outcome accepted = accept("--night " + stamp + " --cases 'naive *' --reason \"$(printf 'kept\\033[31m\\nred')\" --by \"$(printf 'x\\342\\200\\256y')\"");
  ASSERT_EQ(accepted.exit_code, 0) << accepted.output;
  EXPECT_TRUE(contains(accepted.output, "(kept\\x1b[31m\\nred, by x\\u202ey at ")) << accepted.output;
  write("history/accept-20200103T000000Z.json",
        "{\"format\": \"attnsweep-accept/1\", \"night\": \"" + stamp +
            "\", \"cases\": [\"sdpa\\u001b[2J*\"], \"reason\": \"r\\u001b[2J\", \"by\": \"b\", \"at\": \"a\"}\n");
  write("history/accept-\x1b[31m.json", "x");
  const Outcome shown = run_attnsweep("--log-level off history " + history_);
  ASSERT_EQ(shown.exit_code, 0) << shown.output;
  for (const char raw : {'\x1b', '\r'}) EXPECT_EQ(shown.output.find(raw), std::string::npos) << shown.output;
  EXPECT_EQ(shown.output.find("\xe2\x80\xae"), std::string::npos) << shown.output;  // U+202E
  EXPECT_TRUE(contains_each(shown.output, {"for sdpa\\x1b[2J*, by b at a: r\\x1b[2J", "skipped accept-\\x1b[31m.json",
                                           "by x\\u202ey"}));
}

// Item 9: with --isolate each case's worker loads the op library anew. Before:
// a library rebuilt during the run was loaded by the next workers, the run
// ended `done` with no warning and runs.op_libraries named the first build only.
// Now the run stops before the first case of the new build, says why, and
// --resume refuses it as it refuses any rebuilt library.
TEST_F(CliRoundFiveNights, AnIsolatedRunStopsWhenItsOpLibraryIsRebuilt) {
  const std::string library = attnsweep::testing::example_op_copy(path("lib"));
  const std::string config = write("op.yaml", example_op_config(library,
                                                                "dtypes: [fp32, bf16]\ncausal: [true, false]\n"
                                                                "shapes:\n  - {batch: 1, heads: 4, seq_len: 64, head_dim: 32}\n"
                                                                "  - {batch: 1, heads: 4, seq_len: 32, head_dim: 32}\n"));
  const std::string db = path("results.db");
  const pid_t pid = attnsweep::testing::spawn_attnsweep({"--log-level", "warn", "run", config, "--db", db, "--isolate"},
                                                         path("run.log"));
  // Rebuilt once the first case is stored (trailing bytes: the loader ignores them).
  int stored = 0;
  for (int i = 0; i < 1200 && stored == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    try {
      SQLite::Database database(db, SQLite::OPEN_READONLY);
      stored = database.execAndGet("SELECT count(*) FROM cases").getInt();
    } catch (const std::exception&) {
    }
  }
  ASSERT_GT(stored, 0) << read(path("run.log"));
  std::ofstream(library, std::ios::binary | std::ios::app) << "rebuilt";
  const int code = attnsweep::testing::wait_exit(pid);
  const std::string log = read(path("run.log"));
  EXPECT_EQ(code, 1) << log;
  EXPECT_TRUE(contains(log, "op library example was rebuilt or replaced during the run (build ")) << log;
  EXPECT_TRUE(contains(log, "put the run's build back and --resume, or start a new run")) << log;
  SQLite::Database database(db, SQLite::OPEN_READONLY);
  EXPECT_EQ(database.execAndGet("SELECT status FROM runs").getString(), "failed");
  EXPECT_LT(database.execAndGet("SELECT count(*) FROM cases").getInt(), 8);
  const Outcome resumed = run_attnsweep("--log-level off run " + config + " --db " + db + " --resume --isolate");
  EXPECT_EQ(resumed.exit_code, 2) << resumed.output;
  EXPECT_TRUE(contains(resumed.output, "loaded other op library builds")) << resumed.output;
}

// Item 9, the worker's side: a library rebuilt after the parent's check and
// before a worker loads it (or before a --gpus worker's first case of it) is
// seen by the worker, which measures nothing and answers `refused`.
TEST_F(CliRoundFiveNights, AWorkerRefusesALibraryRebuiltBeforeItLoadedIt) {
  const std::string library = attnsweep::testing::example_op_copy(path("lib"));
  const std::string config = write("op.yaml", example_op_config(library,
                                                                "dtypes: [fp32]\ncausal: [true]\n"
                                                                "shapes:\n  - {batch: 1, heads: 2, seq_len: 16, head_dim: 8}\n"));
  const std::string db = path("results.db");
  ASSERT_EQ(run_attnsweep("--log-level off run " + config + " --db " + db).exit_code, 0);
  std::string config_sha256;
  {
    SQLite::Database database(db, SQLite::OPEN_READONLY);
    config_sha256 = attnsweep::sha256_hex(database.execAndGet("SELECT config_yaml FROM runs").getString());
  }
  attnsweep::testing::cut_run_short(db, "1", "interrupted");
  struct stat before {};
  ASSERT_EQ(::stat(library.c_str(), &before), 0);
  const std::string identities =
      nlohmann::json{{"example", {{{"file", library}, {"device", static_cast<unsigned long long>(before.st_dev)},
                                   {"inode", static_cast<unsigned long long>(before.st_ino)},
                                   {"size", static_cast<long long>(before.st_size)},
                                   {"modified_ns", static_cast<long long>(before.st_mtim.tv_sec) * 1000000000LL +
                                                       before.st_mtim.tv_nsec}}}}}
          .dump();
  const std::string worker = "--log-level off worker --config-sha256 " + config_sha256 + " --db " + db +
                             " --run-id 1 --plan-index 0 --device cpu --op-library-identities '" + identities + "'";
  const Outcome same = run_attnsweep(worker);  // the run's build: measured and stored
  EXPECT_EQ(same.exit_code, 0) << same.output;
  EXPECT_TRUE(contains(same.output, "@attnsweep stored 0\t")) << same.output;
  attnsweep::testing::cut_run_short(db, "1", "interrupted");
  std::ofstream(library, std::ios::binary | std::ios::app) << "rebuilt";
  const Outcome refused = run_attnsweep(worker);
  EXPECT_TRUE(contains(refused.output, "@attnsweep refused\top library example was rebuilt or replaced during the run"))
      << refused.output;
  EXPECT_FALSE(contains(refused.output, "@attnsweep stored")) << refused.output;
  SQLite::Database database(db, SQLite::OPEN_READONLY);
  EXPECT_EQ(database.execAndGet("SELECT count(*) FROM cases").getInt(), 0);
}

}  // namespace
