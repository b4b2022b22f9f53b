// Hardening round three (issue 21) on the CPU, end to end through the binary:
// what an op library cannot make attnsweep store as `ok` (stale inputs, a plain
// std::exception refusal, NaN, a wrong shape or dtype, writes into the shared
// inputs, `throw 42`), the numerics verdict, and compare and nightly that
// neither pass a NaN nor call a night judged when a GPU was shared.
// tests/support/misbehaving_ops.cpp holds the ops.
#include <gtest/gtest.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tests/support/cli_output_checks.hpp"
#include "tests/support/cli_test.hpp"
#include "tests/support/run_attnsweep.hpp"

namespace {

using attnsweep::testing::contains;
using attnsweep::testing::Outcome;
using attnsweep::testing::run_attnsweep;

std::string op_variant(const std::string& name, const std::string& op, const std::string& extra = "") {
  return "  - name: " + name + "\n    kind: op_library\n    library: '" ATTNSWEEP_MISBEHAVING_OPS_LIBRARY "'\n"
         "    op: attnsweep_misbehaving::" + op + "\n    causal: is_causal\n" + extra;
}

std::string config(const std::string& variants, const std::string& dtypes = "[bf16]") {
  return "name: hardening\ndevice: cpu\nvariants:\n" + variants + "dtypes: " + dtypes +
         "\ncausal: [true]\nshapes:\n  - {batch: 1, heads: 2, seq_len: 32, head_dim: 16}\n"
         "measure: {warmup: 1, profiled_forwards: 1, min_samples: 5, max_samples: 5}\n";
}

// "status|numerics|error_message" of the case of `variant` and `dtype`.
std::string stored(const std::string& db, const std::string& variant, const std::string& dtype = "bf16") {
  SQLite::Database database(db, SQLite::OPEN_READONLY);
  SQLite::Statement query(database,
                          "SELECT status || '|' || coalesce(numerics, '') || '|' || coalesce(error_message, '') "
                          "FROM cases WHERE variant = ? AND dtype = ?");
  query.bind(1, variant);
  query.bind(2, dtype);
  return query.executeStep() ? query.getColumn(0).getString() : "absent";
}

class CliHardening : public attnsweep::testing::CliTest {
 protected:
  CliHardening() : CliTest("attnsweep-cli-hardening") {}
  Outcome run(const std::string& text, const std::string& db_name = "results.db", const std::string& env = "") {
    return run_config("run", "sweep.yaml", text, db_name, env);
  }
  // Each variant's stored bf16 case in results.db, "status|numerics|error_message", as `expected` lists them.
  void expect_stored(const std::vector<std::pair<std::string, std::string>>& expected) const {
    for (const auto& [variant, case_stored] : expected) {
      EXPECT_EQ(stored(path("results.db"), variant), case_stored) << variant;
    }
  }
};

// Item 1 and 2: the bf16 case lays the op's inputs out; the fp16 case's inputs
// take the freed memory. Keyed on the address (before), the fp16 case timed the
// bf16 tensors and was stored `ok`; and the op's refusal, a plain
// std::runtime_error, was stored as `error`. Now: each case its own inputs, and
// the refusal is `unsupported` with the op's message, at every dtype it refuses.
TEST_F(CliHardening, AnOpThatRefusesFp16AfterBf16IsUnsupportedWithItsMessage) {
  const Outcome outcome = run(config(op_variant("fa3_like", "bf16_only_bshd", "    layout: bshd\n"), "[bf16, fp16, fp32]"));
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  const std::string db = path("results.db");
  EXPECT_EQ(stored(db, "fa3_like", "bf16"), "ok|ok|");
  for (const char* dtype : {"fp16", "fp32"}) {
    EXPECT_EQ(stored(db, "fa3_like", dtype),
              "unsupported||This flash attention build does not support FP16 or FP32 (test op)")
        << dtype;
  }
}

// Item 13: an op writing into q and v corrupted naive and sdpa_math after it
// (rel_error ~1e7, stored ok). Now that op's case is the error, and the next
// variants get their inputs drawn anew and are right.
TEST_F(CliHardening, AnOpThatWritesIntoItsInputsFailsAndTheNextVariantsStayRight) {
  const Outcome outcome = run(config(op_variant("mutates", "mutates") + "  - naive\n  - sdpa_math\n"));
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  expect_stored({{"mutates", "error||mutates wrote into its inputs (query, value changed): its results are not those "
                             "of the case's inputs"},
                 {"naive", "ok|ok|"},
                 {"sdpa_math", "ok|ok|"}});
  SQLite::Database database(path("results.db"), SQLite::OPEN_READONLY);
  EXPECT_LT(database.execAndGet("SELECT max(rel_error) FROM cases WHERE variant IN ('naive', 'sdpa_math')").getDouble(),
            1.6e-2);
}

// Item 13, through an op's own layout: an op of `layout: bshd` works on copies
// laid out for it, so the shared inputs stay whole; the copies are checked
// against them when the case ends, and the op that wrote into them is the error.
TEST_F(CliHardening, AnOpThatWritesIntoItsLaidOutCopiesFailsToo) {
  const Outcome outcome = run(config(op_variant("mutates", "mutates", "    layout: bshd\n") + "  - naive\n"));
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  expect_stored({{"mutates", "error||mutates wrote into its inputs (its laid-out query, value changed): its results "
                             "are not those of the case's inputs"},
                 {"naive", "ok|ok|"}});
}

// Item 13: wrong shapes and dtypes were compared after a silent conversion and
// stored `ok`; an undefined tensor and `throw 42` (item 14) ended the process.
TEST_F(CliHardening, WrongOutputsAndNonStandardExceptionsAreErrorsOfTheirOwnCase) {
  const Outcome outcome = run(config(op_variant("wrong_shape", "wrong_shape") + op_variant("wrong_dtype", "wrong_dtype") +
                                     op_variant("int_out", "int_out") + op_variant("undefined", "undefined") +
                                     op_variant("throws_int", "throws_int") + "  - naive\n"));
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  expect_stored({{"wrong_shape", "error||wrong_shape: the output has shape [1, 2, 32, 1] but [1, 2, 32, 16] "
                                 "was expected (batch, heads, seq_len_q, head_dim_v)"},
                 {"wrong_dtype", "error||wrong_dtype: the output is Double but the inputs are BFloat16"},
                 {"int_out", "error||int_out: the output is Long but the inputs are BFloat16"},
                 {"throws_int", "error||op attnsweep_misbehaving::throws_int threw a C++ exception that is not a "
                                "std::exception (the op's defect, not a refusal)"},
                 {"naive", "ok|ok|"}});
  const std::string undefined = stored(path("results.db"), "undefined");
  EXPECT_TRUE(contains(undefined, "error||")) << undefined;
}

// Item 5: a NaN output was `ok` with rel_error NULL and no verdict. Now the
// verdict says nonfinite, in the database, the results view and the summary.
TEST_F(CliHardening, ANanOutputHasTheVerdictNonfiniteInTheTableTheViewAndTheSummary) {
  const std::string file = write("sweep.yaml", config(op_variant("nans", "nans") + "  - naive\n"));
  const Outcome outcome = run_attnsweep("run " + file + " --db " + path("results.db"));
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  EXPECT_EQ(stored(path("results.db"), "nans"), "ok|nonfinite|");
  EXPECT_TRUE(contains(outcome.output, "nonfinite")) << outcome.output;  // the summary's numerics column
  SQLite::Database database(path("results.db"), SQLite::OPEN_READONLY);
  EXPECT_EQ(database.execAndGet("SELECT numerics FROM results WHERE variant = 'nans'").getString(), "nonfinite");
  EXPECT_DOUBLE_EQ(database.execAndGet("SELECT numerics_bound FROM results WHERE variant = 'naive'").getDouble(), 1.6e-2);
}

// Item 7: a kernel that starts returning NaN passed compare and nightly as
// FASTER -95%, exit 0. Now it is a numerics regression (exit 1), and its time
// is not judged.
TEST_F(CliHardening, AnOutputTurningNanIsARegressionInCompareAndNightly) {
  ASSERT_EQ(run(config(op_variant("myop", "good_bshd", "    layout: bshd\n")), "before.db").exit_code, 0);
  ASSERT_EQ(run(config(op_variant("myop", "nans")), "after.db").exit_code, 0);
  const Outcome compared = run_attnsweep("compare " + path("before.db") + " " + path("after.db"));
  EXPECT_EQ(compared.exit_code, 1) << compared.output;
  EXPECT_TRUE(contains(compared.output, "the output is not finite now")) << compared.output;
  EXPECT_TRUE(contains(compared.output, "the candidate's output is not finite")) << compared.output;

  const std::string file = write("bad.yaml", config(op_variant("myop", "nans")));
  const Outcome nightly = run_attnsweep("--log-level off nightly " + file + " --baseline " + path("before.db") +
                                        " --db " + path("night.db") + " --device cpu");
  EXPECT_EQ(nightly.exit_code, 1) << nightly.output;
  EXPECT_TRUE(contains(nightly.output, "nightly: REGRESSION (exit 1)")) << nightly.output;
}

// Item 4 (the CPU half: the verdict from stored facts; the GPU test runs a real
// second process): a case measured while another process computed on the GPU
// gets no time verdict, and compare and nightly end INCONCLUSIVE (exit 4), never
// "no regression".
TEST_F(CliHardening, CasesMeasuredOnASharedGpuMakeCompareAndNightlyInconclusive) {
  ASSERT_EQ(run(config("  - naive\n  - sdpa_math\n"), "before.db").exit_code, 0);
  ASSERT_EQ(run(config("  - naive\n  - sdpa_math\n"), "after.db").exit_code, 0);
  {
    SQLite::Database database(path("after.db"), SQLite::OPEN_READWRITE);
    database.exec("UPDATE cases SET other_processes = 1 WHERE variant = 'naive'");
  }
  const Outcome compared = run_attnsweep("compare " + path("before.db") + " " + path("after.db"));
  EXPECT_EQ(compared.exit_code, 4) << compared.output;
  EXPECT_TRUE(contains(compared.output, "1 not judged (INCONCLUSIVE)")) << compared.output;
  EXPECT_TRUE(contains(compared.output, "shared GPU: 1 vs 0 other compute process(es) (candidate vs baseline)"))
      << compared.output;
  const Outcome json = run_attnsweep("compare " + path("before.db") + " " + path("after.db") + " --format json");
  EXPECT_TRUE(contains(json.output, "\"inconclusive\": true")) << json.output;

  // The baseline shared: the nightly against it cannot judge those cases either.
  const Outcome nightly = run_attnsweep("--log-level off nightly " + write("n.yaml", config("  - naive\n")) +
                                        " --baseline " + path("after.db") + " --db " + path("night.db") +
                                        " --device cpu");
  EXPECT_EQ(nightly.exit_code, 4) << nightly.output;
  EXPECT_TRUE(contains(nightly.output, "nightly: INCONCLUSIVE")) << nightly.output;
}

// Item 4: a night measured beside another process is no baseline (every case
// compared with it would go unjudged): the next night skips it, says so, and
// compares with the newest night measured alone.
TEST_F(CliHardening, ANightlyPassesOverASharedNightToTheNewestOneMeasuredAlone) {
  const std::string night = write("night.yaml", config("  - naive\n"));
  const std::string history = path("history");
  for (int i = 0; i < 2; ++i) {
    const Outcome outcome = run_attnsweep("--log-level off nightly " + night + " --history " + history + " --db " +
                                          path("n" + std::to_string(i) + ".db") + " --device cpu");
    ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
    std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  }
  std::vector<std::string> nights;
  for (const auto& entry : std::filesystem::directory_iterator(history)) {
    if (entry.path().extension() == ".db") nights.push_back(entry.path().string());
  }
  std::sort(nights.begin(), nights.end());
  ASSERT_EQ(nights.size(), 2u);
  {
    SQLite::Database newest(nights[1], SQLite::OPEN_READWRITE);
    newest.exec("UPDATE cases SET other_processes = 1");
  }
  const Outcome third = run_attnsweep("--log-level off nightly " + night + " --history " + history + " --db " +
                                      path("n2.db") + " --device cpu");
  EXPECT_EQ(third.exit_code, 0) << third.output;
  const std::string newest = std::filesystem::path(nights[1]).filename().string();
  const std::string older = std::filesystem::path(nights[0]).filename().string();
  EXPECT_TRUE(contains(third.output, "skipped " + newest +
                                         ": 1 of its cases were measured while another process computed on the GPU"))
      << third.output;
  EXPECT_TRUE(contains(third.output, older)) << third.output;  // the baseline
}

}  // namespace
