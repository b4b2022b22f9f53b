#pragma once
// The fixture of the GPU tests that run sweeps through the binary: each test
// skips cleanly where the binary sees no CUDA device, and runs its configs on
// it with `attnsweep run --device cuda` into databases of its scratch folder.
#include <gtest/gtest.h>

#include <string>

#include "tests/support/cli_test.hpp"
#include "tests/support/gpu_checks.hpp"
#include "tests/support/run_attnsweep.hpp"

namespace attnsweep::testing {

class CudaSweepTest : public CliTest {
 protected:
  using CliTest::CliTest;

  void SetUp() override {
    if (!binary_sees_cuda()) GTEST_SKIP() << "no CUDA device here";
  }

  // `attnsweep --log-level off run CONFIG --device cuda --db DB`; `environment`
  // as run_attnsweep takes it ("NAME=value ").
  static Outcome run_on_cuda(const std::string& config, const std::string& db, const std::string& environment = "") {
    return run_attnsweep("--log-level off run " + config + " --device cuda --db " + db, environment);
  }

  // Writes `config_text` to NAME.yaml and runs it on the CUDA device into
  // NAME.db, the database db_ names after.
  Outcome sweep(const std::string& name, const std::string& config_text, const std::string& environment = "") {
    db_ = path(name + ".db");
    return run_on_cuda(write(name + ".yaml", config_text), db_, environment);
  }

  std::string db_;  // the last sweep's database
};

}  // namespace attnsweep::testing
