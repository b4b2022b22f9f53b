// Variants of kind op_library end to end on the CPU, with the op library this
// project ships (examples/attention_op, built as libattnsweep_example_attention_op.so):
// swept next to a built-in variant and checked against float64; found in a
// hub kernel's folder by its build variant; and every bad library, operator or
// mapping refused before anything is stored, with one line and exit 2.
#include <gtest/gtest.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/support/cli_output_checks.hpp"
#include "tests/support/cli_run_cut_short.hpp"
#include "tests/support/cli_test.hpp"
#include "tests/support/example_op_copy.hpp"

namespace {

namespace fs = std::filesystem;
using attnsweep::testing::contains;
using attnsweep::testing::Outcome;

// The example op as a variant; `extra` lines go into its mapping, `library` replaces the path.
std::string config_with(const std::string& library, const std::string& extra = "",
                        const std::string& op = "attnsweep_example::attention") {
  return "name: op-library\n"
         "device: cpu\n"
         "variants:\n"
         "  - sdpa_math\n"
         "  - name: example\n"
         "    kind: op_library\n"
         "    library: '" + library + "'\n"
         "    op: " + op + "\n"
         "    causal: is_causal\n"
         "    scale: scale\n" + extra +
         "dtypes: [fp32, bf16]\n"
         "causal: [true, false]\n"
         "shapes:\n"
         "  - {batch: 1, heads: 4, seq_len: 64, head_dim: 32}\n"
         "  - {batch: 2, heads: 4, kv_heads: 2, seq_len: 48, head_dim: 64}\n"
         "measure: {warmup: 1, profiled_forwards: 1, min_samples: 3, max_samples: 3}\n";
}

class CliOpLibrary : public attnsweep::testing::CliTest {
 protected:
  CliOpLibrary() : CliTest("attnsweep-cli-op-library") {}
  Outcome run(const std::string& config_text, const std::string& verb = "run") {
    return run_config(verb, "op.yaml", config_text, "results.db");
  }
};

TEST_F(CliOpLibrary, TheExampleOpIsSweptNextToABuiltInVariantAndMatchesFloat64) {
  const Outcome outcome = run(config_with(ATTNSWEEP_EXAMPLE_OP_LIBRARY));
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  SQLite::Database db(path("results.db"), SQLite::OPEN_READONLY);
  // 2 shapes x 2 dtypes x 2 masks, for each of the two variants.
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM cases WHERE variant = 'example' AND status = 'ok'").getInt(), 8);
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM cases WHERE variant = 'sdpa_math' AND status = 'ok'").getInt(), 8);
  EXPECT_LT(db.execAndGet("SELECT max(rel_error) FROM cases WHERE variant = 'example' AND dtype = 'fp32'").getDouble(), 1e-5);
  EXPECT_LT(db.execAndGet("SELECT max(rel_error) FROM cases WHERE variant = 'example' AND dtype = 'bf16'").getDouble(), 2e-2);
  EXPECT_GT(db.execAndGet("SELECT min(cpu_time_us_median) FROM cases WHERE variant = 'example'").getDouble(), 0);
  // The op's own operator calls are what the profiler saw.
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM ops o JOIN cases c USING (case_id) WHERE c.variant = 'example' "
                          "AND o.name = 'attnsweep_example::attention'").getInt(), 8);
  // The config's text, mapping included, is stored with the run.
  EXPECT_TRUE(contains(db.execAndGet("SELECT config_yaml FROM runs").getString(), "kind: op_library"));
  const Outcome plan = run(config_with(ATTNSWEEP_EXAMPLE_OP_LIBRARY), "plan");
  ASSERT_EQ(plan.exit_code, 0) << plan.output;
  EXPECT_TRUE(contains(plan.output, "16 cases")) << plan.output;
  EXPECT_TRUE(contains(plan.output, "example ")) << plan.output;
}

// A library rebuilt between a run's start and its --resume would measure another kernel
// under the same variant name: refused (exit 2, the database untouched); the same build resumes.
TEST_F(CliOpLibrary, AResumeRefusesALibraryRebuiltSinceTheRunStarted) {
  const std::string library = attnsweep::testing::example_op_copy(path("lib"));
  ASSERT_EQ(run(config_with(library)).exit_code, 0);
  attnsweep::testing::cut_run_short(path("results.db"), "variant = 'example'", "interrupted");
  std::string stored;
  {
    SQLite::Database db(path("results.db"), SQLite::OPEN_READONLY);
    stored = db.execAndGet("SELECT op_libraries FROM runs").getString();
  }
  ASSERT_EQ(stored.rfind("{\"example\":\"", 0), 0u) << stored;
  const auto before = fs::last_write_time(path("results.db"));

  std::ofstream(library, std::ios::binary | std::ios::app) << "rebuilt";  // trailing bytes: the loader ignores them
  const Outcome refused = run(config_with(library), "run --resume latest --db " + path("results.db"));
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_TRUE(contains(refused.output, "run 1 loaded other op library builds (" + stored + ") than ")) << refused.output;
  EXPECT_TRUE(contains(refused.output, "put the run's build back, or start a new run without --resume")) << refused.output;
  EXPECT_EQ(fs::last_write_time(path("results.db")), before);
  {
    SQLite::Database db(path("results.db"), SQLite::OPEN_READONLY);
    EXPECT_EQ(db.execAndGet("SELECT count(*) FROM cases WHERE variant = 'example'").getInt(), 0);
  }

  fs::copy_file(ATTNSWEEP_EXAMPLE_OP_LIBRARY, library, fs::copy_options::overwrite_existing);  // the run's build back
  const Outcome resumed = run(config_with(library), "run --resume latest --db " + path("results.db"));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  SQLite::Database db(path("results.db"), SQLite::OPEN_READONLY);
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM cases WHERE variant = 'example' AND status = 'ok'").getInt(), 8);
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM runs").getInt(), 1);
}

// A hub kernel's folder: the build for this torch is picked; a build for another
// torch (here a file that is no shared object at all) is never loaded.
TEST_F(CliOpLibrary, AHubFolderLoadsTheBuildThisTorchPicks) {
  const std::string hub = path("hub");
  for (const std::string variant : {"torch210-cxx11-cu130-x86_64-linux", "torch211-cxx11-cu130-x86_64-linux",
                                    "torch211-cxx11-cpu-x86_64-linux"}) {
    fs::create_directories(hub + "/build/" + variant + "/example");
    std::ofstream(hub + "/build/" + variant + "/example/_example_0123abc.abi3.so") << "not a shared object\n";
  }
  // The one torch 2.11 with CUDA 13.0 picks (this build's torch is 2.11+cu130).
  fs::remove(hub + "/build/torch211-cxx11-cu130-x86_64-linux/example/_example_0123abc.abi3.so");
  fs::copy_file(ATTNSWEEP_EXAMPLE_OP_LIBRARY, hub + "/build/torch211-cxx11-cu130-x86_64-linux/example/_example_0123abc.abi3.so");
  const Outcome outcome = run(config_with(hub, "", "attention"));  // op alone: its namespace is found
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  SQLite::Database db(path("results.db"), SQLite::OPEN_READONLY);
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM cases WHERE variant = 'example' AND status = 'ok'").getInt(), 8);
}

TEST_F(CliOpLibrary, EveryBadLibraryOperatorOrMappingIsOneLineAndExitTwo) {
  const std::string library = ATTNSWEEP_EXAMPLE_OP_LIBRARY;
  fs::create_directories(path("empty-hub/build/torch29-cxx11-cu126-x86_64-linux"));
  write("not-a-library.so", "text\n");
  struct Bad {
    std::string config, message;
  };
  const std::vector<Bad> bad = {
      {config_with(path("missing.so")), "op library variant 'example': " + path("missing.so") + " (" +
                                            path("missing.so") + "): no such file or folder"},
      {config_with(path("not-a-library.so")), "op library variant 'example': cannot load " + path("not-a-library.so")},
      {config_with(path("empty-hub")), "/build has no build for torch 2.11"},
      {config_with(library, "", "attnsweep_example::nope"),
       "no operator attnsweep_example::nope after loading"},
      {config_with(library, "", "nope"), "op 'nope' is not among the operators the library registered"},
      {config_with(library, "    fixed: {scale: abc}\n"), "is mapped by causal, scale or arguments already"},
      {config_with(library, "    output: 3\n"), "output: 3 but attnsweep_example::attention"},
      {config_with(library, "    kind: op_libary\n"), "duplicate key"},
      {std::string(config_with(library)).replace(config_with(library).find("causal: is_causal"), 17, "causal: causal_flag"),
       "causal: no argument 'causal_flag' in attnsweep_example::attention("},
      {std::string(config_with(library)).replace(config_with(library).find("scale: scale"), 12, "scale: is_causal"),
       "scale: argument 'is_causal' of attnsweep_example::attention("},
      {std::string(config_with(library)).replace(config_with(library).find("name: example"), 13, "name: sdpa_flash"),
       "'sdpa_flash' is a built-in variant"},
  };
  for (const auto& [config, message] : bad) {
    SCOPED_TRACE(message);
    const Outcome outcome = run(config);
    EXPECT_EQ(outcome.exit_code, 2) << outcome.output;
    EXPECT_TRUE(contains(outcome.output, message)) << outcome.output;
    // Every refusal found once the op is loaded names the variants entry (line 5) too.
    if (contains(outcome.output, "op library variant 'example'")) {
      EXPECT_EQ(outcome.output.rfind("error: " + path("op.yaml") + ":5:5: op library variant 'example': ", 0), 0u)
          << outcome.output;
    }
    EXPECT_EQ(std::count(outcome.output.begin(), outcome.output.end(), '\n'), 1) << outcome.output;
    EXPECT_FALSE(fs::exists(path("results.db"))) << "a database was created";
  }
}

}  // namespace
