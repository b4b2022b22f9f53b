#pragma once
// The fixture of the tests that drive the binary in a scratch folder of their
// own: the configs they write, the databases and files they name live there
// and go with the test. Each suite names its folder, e.g. "attnsweep-cli".
// tests/rules/cli_fixture_test.sh checks that every tests/test_cli*.cpp that
// runs the binary has its fixture from this one.
#include <gtest/gtest.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include <stdexcept>
#include <string>

#include "tests/support/run_attnsweep.hpp"
#include "tests/support/scratch_directory.hpp"

namespace attnsweep::testing {

class CliTest : public ::testing::Test {
 protected:
  explicit CliTest(const std::string& scratch_prefix) : scratch_(scratch_prefix) {}

  // Writes `text` to `name` in the scratch folder and returns its path.
  std::string write(const std::string& name, const std::string& text) const { return scratch_.write(name, text); }
  std::string path(const std::string& name) const { return scratch_.path(name); }

  // `attnsweep --log-level off COMMAND CONFIG`, `config_text` written to
  // `config_name` in the scratch folder; the command `run` stores into
  // `db_name` there (`--db`), any other (`plan`, or a run given its own --db
  // such as "run --resume latest --db X") gets no --db. `environment` as
  // run_attnsweep takes it ("NAME=value ").
  Outcome run_config(const std::string& command, const std::string& config_name, const std::string& config_text,
                     const std::string& db_name, const std::string& environment = "") const {
    return run_attnsweep("--log-level off " + command + " " + write(config_name, config_text) +
                             (command == "run" ? " --db " + path(db_name) : std::string()),
                         environment);
  }

  ScratchDirectory scratch_;
};

// A CLI test that sweeps one config at a time: `run` writes it to s.yaml and
// runs it into r.db (or the database `db` names) in the scratch folder.
class CliSweepTest : public CliTest {
 protected:
  using CliTest::CliTest;
  Outcome run(const std::string& yaml, const std::string& db = "r.db") const {
    return run_config("run", "s.yaml", yaml, db);
  }

  // `run`, then its database opened to read. A run that does not exit 0 fails the
  // test here (an exception gtest reports with the run's output).
  SQLite::Database swept(const std::string& yaml) const {
    const Outcome outcome = run(yaml);
    if (outcome.exit_code != 0) {
      throw std::runtime_error("the sweep exited " + std::to_string(outcome.exit_code) + ":\n" + outcome.output);
    }
    return SQLite::Database(path("r.db"), SQLite::OPEN_READONLY);
  }
};

}  // namespace attnsweep::testing
