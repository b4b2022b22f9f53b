#pragma once
// The fixture of the tests that drive the binary in a scratch folder of their
// own: the configs they write, the databases and files they name live there
// and go with the test. Each suite names its folder, e.g. "attnsweep-cli".
#include <gtest/gtest.h>

#include <string>

#include "tests/support/scratch_directory.hpp"

namespace attnsweep::testing {

class CliTest : public ::testing::Test {
 protected:
  explicit CliTest(const std::string& scratch_prefix) : scratch_(scratch_prefix) {}

  // Writes `text` to `name` in the scratch folder and returns its path.
  std::string write(const std::string& name, const std::string& text) const { return scratch_.write(name, text); }
  std::string path(const std::string& name) const { return scratch_.path(name); }

  ScratchDirectory scratch_;
};

}  // namespace attnsweep::testing
