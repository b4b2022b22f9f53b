#pragma once
// What the nightly CLI tests share (tests/test_cli_nightly.cpp, tests/test_cli_history.cpp,
// tests/test_cli_round_five_nights.cpp).
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "tests/support/cli_output_checks.hpp"
#include "tests/support/cli_test.hpp"  // contains, which the nightly tests use throughout
#include "tests/support/file_text.hpp"  // read_file, likewise

namespace attnsweep::testing {

// Two CPU cases whose forward is compute, not call overhead (about 0.3 ms). The
// nights run with one thread and --threshold 99: on a loaded 2-core machine
// torch's thread pool made one CPU median 90x slower, which is not what these
// tests are about; the planted slowdown repeats the forward 8 times.
inline const char* const kTinyNightlyConfig = R"(name: tiny-nightly
device: cpu
variants: [naive, sdpa_math]
dtypes: [fp32]
shapes: {batch: 1, heads: 4, seq_len: 256, head_dim: 32}
measure: {warmup: 2, profiled_forwards: 1, min_samples: 40, max_samples: 40}
)";

// The fixture of the tests that run nights of kTinyNightlyConfig into a
// history folder (history_) of the scratch folder.
class TinyNightlyTest : public CliTest {
 protected:
  using CliTest::CliTest;

  // One night into the history folder; a second apart, so that no two share a stamp.
  Outcome night(const std::string& environment = "", const std::string& extra = "--threshold 99") {
    ++nights_;
    if (nights_ > 1) ::sleep(1);
    return run_attnsweep("--log-level off nightly " + config_ + " --history " + history_ + " --db " +
                             path("n" + std::to_string(nights_) + ".db") + " " + extra,
                         "OMP_NUM_THREADS=1 " + environment);
  }

  std::string config_ = write("nightly.yaml", kTinyNightlyConfig);
  std::string history_ = path("history");
  int nights_ = 0;
};

// The night-stamp rule, as nightly and history both say it: a night stamped in
// the future (20991231T235959Z), one whose stamp is no UTC time (20261301T000000Z)
// and one whose run started away from its stamp are each skipped with their
// reason. `prefix`: what the command puts before each line ("history: ", or "").
inline void expect_bad_night_stamps_skipped(const std::string& output, const std::string& prefix,
                                            const std::string& off_run_stamp, const std::string& off_run_started_at) {
  EXPECT_TRUE(contains(output, prefix + "skipped nightly-20991231T235959Z.db: its name's stamp 20991231T235959Z "
                                        "is in the future (now "))
      << output;
  EXPECT_TRUE(contains(output, prefix + "skipped nightly-20261301T000000Z.db: its name's stamp 20261301T000000Z "
                                        "is not a valid UTC time"))
      << output;
  EXPECT_TRUE(contains(output, prefix + "skipped nightly-" + off_run_stamp + ".db: its run started at " +
                                   off_run_started_at +
                                   ", not between a minute before and 12 hours after its name's stamp " + off_run_stamp))
      << output;
}

}  // namespace attnsweep::testing
