#pragma once
// What the CLI tests check in a command's output: that it says a thing, or each
// of several things (one assertion for the lot, whose failure names every part
// missing).
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace attnsweep::testing {

// Whether `part` is somewhere in `text`.
inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Whether `text` holds each of `parts` somewhere; a failure lists the parts it
// lacks, then the whole text.
inline ::testing::AssertionResult contains_each(const std::string& text, const std::vector<std::string>& parts) {
  std::string missing;
  for (const std::string& part : parts) {
    if (text.find(part) == std::string::npos) missing += "  " + part + "\n";
  }
  if (missing.empty()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "missing:\n" << missing << "in:\n" << text;
}

}  // namespace attnsweep::testing
