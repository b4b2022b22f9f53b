// On a GPU: a device-side assert poisons the CUDA context of the process it
// happens in. Without --isolate every later case of the sweep fails; with
// --isolate only the faulty case does. Skips where no CUDA device exists.
#include <gtest/gtest.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>

#include "tests/support/gpu_checks.hpp"
#include "tests/support/run_attnsweep.hpp"

namespace {

namespace fs = std::filesystem;

bool has_cuda() { return attnsweep::testing::binary_sees_cuda(); }

// Runs the fault and then sdpa_flash; returns the exit code and sdpa_flash's stored status.
std::pair<int, std::string> run_after_fault(bool isolate, const fs::path& directory) {
  const fs::path config = directory / "fault.yaml";
  std::ofstream(config) << "variants: [test_device_fault, sdpa_flash]\n"
                           "dtypes: [bf16]\n"
                           "shapes: {batch: 1, heads: 2, seq_len: 128, head_dim: 64}\n"
                           "measure: {warmup: 1, profiled_forwards: 2, min_samples: 3, max_samples: 5}\n";
  const fs::path db = directory / (isolate ? "isolated.db" : "shared.db");
  const attnsweep::testing::Outcome outcome = attnsweep::testing::run_attnsweep(
      "run " + config.string() + " --device cuda --db " + db.string() + (isolate ? " --isolate" : ""),
      "ATTNSWEEP_TEST_VARIANTS=1 ");
  const std::string& output = outcome.output;
  const int exit_code = outcome.exit_code;
  SCOPED_TRACE(output);
  SQLite::Database check(db.string(), SQLite::OPEN_READONLY);
  const std::string fault = check.execAndGet("SELECT status || ': ' || error_message FROM cases WHERE variant = 'test_device_fault'").getString();
  EXPECT_EQ(fault.rfind("error: ", 0), 0u) << fault << "\n" << output;
  EXPECT_NE(fault.find("device-side assert"), std::string::npos) << fault;
  SQLite::Statement flash(check, "SELECT status || ': ' || coalesce(error_message, '') FROM cases WHERE variant = 'sdpa_flash'");
  return {exit_code, flash.executeStep() ? flash.getColumn(0).getString() : "absent"};
}

TEST(GpuIsolation, ADeviceSideAssertCostsOneCaseOnlyWithIsolate) {
  if (!has_cuda()) GTEST_SKIP() << "no CUDA device here";
  const fs::path directory = fs::temp_directory_path() / ("attnsweep-gpu-isolation-" + std::to_string(::getpid()));
  fs::create_directories(directory);
  // Without --isolate the poisoned context ends the sweep (exit 1) after storing the fault.
  const auto [shared_exit, shared_flash] = run_after_fault(false, directory);
  EXPECT_EQ(shared_exit, 1);
  EXPECT_EQ(shared_flash, "absent");
  // With --isolate the next case runs in a fresh worker and succeeds.
  const auto [isolated_exit, isolated_flash] = run_after_fault(true, directory);
  EXPECT_EQ(isolated_exit, 0);
  EXPECT_EQ(isolated_flash, "ok: ");
  fs::remove_all(directory);
}

}  // namespace
