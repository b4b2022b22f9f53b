// runner/jobs without a scheduler: the GPUs of each flavor, and run_process's
// time limit (the process group stopped, SIGKILL for what ignores SIGTERM).
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <map>
#include <string>
#include <thread>

#include "runner/jobs/flavors.hpp"
#include "runner/jobs/hf_cli.hpp"
#include "runner/jobs/process.hpp"

namespace {

using namespace attnsweep::jobs;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Issue 22: l4x1 and l40sx1 ended in x<digits> and ran as flavors of several GPUs.
TEST(Flavors, GpuCountOfEveryKnownFlavor) {
  const std::map<std::string, int> expected = {
      {"cpu-basic", 0},      {"cpu-upgrade", 0},      {"cpu-performance", 0}, {"cpu-xl", 0},
      {"t4-small", 1},       {"t4-medium", 1},        {"l4x1", 1},            {"l4x4", 4},
      {"l40sx1", 1},         {"l40sx4", 4},           {"l40sx8", 8},          {"a10g-small", 1},
      {"a10g-large", 1},     {"a10g-largex2", 2},     {"a10g-largex4", 4},    {"a100-large", 1},
      {"a100x4", 4},         {"a100x8", 8},           {"h200", 1},            {"h200x2", 2},
      {"h200x4", 4},         {"h200x8", 8},           {"rtx-pro-6000", 1},    {"rtx-pro-6000x2", 2},
      {"rtx-pro-6000x4", 4}, {"rtx-pro-6000x8", 8}};
  for (const auto& flavor : known_flavors()) {
    const auto found = expected.find(flavor);
    ASSERT_NE(found, expected.end()) << flavor << " is known but not in this test: add its GPU count";
    EXPECT_EQ(flavor_gpu_count(flavor), found->second) << flavor;
  }
  EXPECT_EQ(expected.size(), known_flavors().size());
  // Names hf may list later follow the same rule.
  EXPECT_EQ(flavor_gpu_count("b200"), 1);
  EXPECT_EQ(flavor_gpu_count("b200x8"), 8);
  EXPECT_EQ(flavor_gpu_count("cpu-xxl"), 0);
}

TEST(Process, WithinItsLimitAProgramRunsToItsEnd) {
  const ProcessResult result = run_process("/bin/sh", {"-c", "sleep 0.2; echo done; echo oops >&2; exit 3"}, -1, 10);
  EXPECT_FALSE(result.timed_out);
  EXPECT_EQ(result.exit_code, 3);
  EXPECT_EQ(result.output, "done\n");
  EXPECT_EQ(result.errors, "oops\n");
  EXPECT_EQ(failure_reason(result), "oops");
}

// 'R', 'S', ... while it runs; 'Z' once dead but not reaped (its parent died: init reaps it, or not
// in a container), none when gone.
char state_of(const std::string& pid) {
  std::ifstream stat("/proc/" + pid + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return 0;
  const auto end = line.rfind(')');
  return end == std::string::npos || end + 2 >= line.size() ? 0 : line[end + 2];
}

TEST(Process, ATimeLimitStopsTheProgramAndWhatItStarted) {
  const auto start = std::chrono::steady_clock::now();
  // The shell starts a sleep that holds the output open and waits for it.
  const ProcessResult result = run_process("/bin/sh", {"-c", "sleep 30 & echo $!; wait"}, -1, 0.5);
  EXPECT_LT(seconds_since(start), 5);
  EXPECT_TRUE(result.timed_out);
  EXPECT_FALSE(result.succeeded());
  EXPECT_EQ(result.time_limit_seconds, 0.5);
  EXPECT_EQ(failure_reason(result), "hf timed out after 0.5 s (ATTNSWEEP_HF_TIMEOUT_SECONDS sets another limit)");
  EXPECT_EQ(failure_reason(result, "git"), "git timed out after 0.5 s");
  std::string sleeper = result.output;
  while (!sleeper.empty() && sleeper.back() == '\n') sleeper.pop_back();
  ASSERT_FALSE(sleeper.empty());
  const auto stopped = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  while (state_of(sleeper) != 0 && state_of(sleeper) != 'Z' && std::chrono::steady_clock::now() < stopped) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const char state = state_of(sleeper);
  EXPECT_TRUE(state == 0 || state == 'Z') << "the sleep it started runs on: " << state;
}

TEST(Process, WhatIgnoresSigtermIsKilledAfterTheGrace) {
  const auto start = std::chrono::steady_clock::now();
  const ProcessResult result = run_process("/bin/sh", {"-c", "trap '' TERM; sleep 30"}, -1, 0.5);
  const double took = seconds_since(start);
  EXPECT_GE(took, 0.5 + kTerminateGraceSeconds - 0.2);
  EXPECT_LT(took, 0.5 + kTerminateGraceSeconds + 3);
  EXPECT_TRUE(result.timed_out);
  EXPECT_EQ(result.exit_code, 128 + 9);
}

}  // namespace
