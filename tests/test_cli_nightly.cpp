// `attnsweep nightly` end to end on the CPU: a first night that only becomes
// the baseline, a second night compared with it through the history folder, a
// planted slowdown (the test-only ATTNSWEEP_TEST_SLOWDOWN knob) caught against
// a pinned baseline with exit 1, and bad input refused with exit 2 before
// anything runs.
#include <gtest/gtest.h>

#include <SQLiteCpp/SQLiteCpp.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/run_attnsweep.hpp"
#include "tests/support/scratch_directory.hpp"

namespace {

namespace fs = std::filesystem;

using attnsweep::testing::Outcome;

// Two CPU cases whose forward is compute, not call overhead (about 0.3 ms). The
// nights run with one thread and --threshold 99: on a loaded 2-core machine
// torch's thread pool made one CPU median 90x slower, which is not what these
// tests are about; the planted slowdown repeats the forward 8 times.
const char* const kNightlyConfig = R"(name: tiny-nightly
device: cpu
variants: [naive, sdpa_math]
dtypes: [fp32]
shapes: {batch: 1, heads: 4, seq_len: 256, head_dim: 32}
measure: {warmup: 2, profiled_forwards: 1, min_samples: 40, max_samples: 40}
)";

std::vector<std::string> files_in(const std::string& folder) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(folder)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::string read(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

class CliNightly : public ::testing::Test {
 protected:
  std::string path(const std::string& name) const { return scratch_.path(name); }
  Outcome nightly(const std::string& arguments, const std::string& environment = "") const {
    return attnsweep::testing::run_attnsweep("--log-level off nightly " + config_ + " " + arguments,
                                             "OMP_NUM_THREADS=1 " + environment);
  }

  attnsweep::testing::ScratchDirectory scratch_{"attnsweep-cli-nightly"};
  std::string config_ = scratch_.write("nightly.yaml", kNightlyConfig);
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
}

TEST_F(CliNightly, APlantedSlowdownAgainstAPinnedBaselineExitsOne) {
  const std::string baseline = path("baseline.db");
  const Outcome pinned =
      attnsweep::testing::run_attnsweep("--log-level off run " + config_ + " --db " + baseline, "OMP_NUM_THREADS=1 ");
  ASSERT_EQ(pinned.exit_code, 0) << pinned.output;
  const Outcome slowed = nightly("--baseline " + baseline + ":1 --db " + path("slow.db") + " --threshold 99",
                                 "ATTNSWEEP_TEST_SLOWDOWN=naive:8 ");
  EXPECT_EQ(slowed.exit_code, 1) << slowed.output;
  EXPECT_TRUE(contains(slowed.output, "nightly: REGRESSION (exit 1)")) << slowed.output;
  EXPECT_TRUE(contains(slowed.output, "attnsweep compare: 1 regression")) << slowed.output;
  // The slowed variant is the one named, as SLOWER; the other variant is not a finding.
  EXPECT_TRUE(contains(slowed.output, "| naive 1x4x256x32 fp32 causal cpu | time |")) << slowed.output;
  EXPECT_TRUE(contains(slowed.output, "SLOWER")) << slowed.output;
  EXPECT_FALSE(contains(slowed.output, "| sdpa_math 1x4x256x32")) << slowed.output;
  // The knob is part of the environment the summary shows first.
  EXPECT_TRUE(contains(slowed.output, "env_vars.ATTNSWEEP_TEST_SLOWDOWN")) << slowed.output;
  // The summary file holds what was printed; the pinned baseline is untouched.
  EXPECT_TRUE(contains(read(path("slow.md")), "attnsweep compare: 1 regression"));
  SQLite::Database db(baseline, SQLite::OPEN_READONLY);
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM runs").getInt(), 1);
}

TEST_F(CliNightly, BadInputIsOneLineAndExitTwoAndNothingRuns) {
  const std::string history = path("history");
  struct Bad {
    std::string arguments, message;
  };
  scratch_.write("not-a-folder", "x");
  const std::vector<Bad> bad = {
      {"--db " + path("x.db"), "nightly needs exactly one of --history DIR"},
      {"--history " + history + " --baseline " + path("b.db") + " --db " + path("x.db"), "--history excludes --baseline"},
      {"--baseline " + path("missing.db") + " --db " + path("x.db"), "--baseline: " + path("missing.db") + ": database not found"},
      {"--baseline " + path("missing.db") + ":x --db " + path("x.db"), "is not a run id"},
      {"--history " + path("not-a-folder") + " --db " + path("x.db"), "--history must be a folder"},
      {"--history " + history + " --threshold 0 --db " + path("x.db"), "--threshold: invalid value '0'"},
  };
  for (const auto& [arguments, message] : bad) {
    SCOPED_TRACE(arguments);
    const Outcome outcome = nightly(arguments);
    EXPECT_EQ(outcome.exit_code, 2) << outcome.output;
    EXPECT_TRUE(contains(outcome.output, message)) << outcome.output;
    EXPECT_EQ(std::count(outcome.output.begin(), outcome.output.end(), '\n'), 1) << outcome.output;
    EXPECT_FALSE(fs::exists(path("x.db"))) << "a sweep ran";
  }
}

}  // namespace
