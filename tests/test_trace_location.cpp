// Trace paths: stored relative to the database's folder, resolved from the
// database as a reader names it (runner/storage/trace_location.hpp).
#include <gtest/gtest.h>

#include <filesystem>

#include "runner/storage/trace_location.hpp"
#include "tests/support/scratch_directory.hpp"

namespace attnsweep::storage {
namespace {

namespace fs = std::filesystem;

TEST(TraceLocation, StoredPathsAreRelativeToTheDatabasesFolder) {
  EXPECT_EQ(trace_path_to_store("/data/night/results.db", "/data/night/results-traces/run1-0.json"),
            "results-traces/run1-0.json");
  EXPECT_EQ(trace_path_to_store("/data/night/results.db", "/data/traces/run1-0.json"), "../traces/run1-0.json");
  EXPECT_EQ(trace_path_to_store("/data/./night/../night/results.db", "/data/night/t/./x.json"), "t/x.json");
  EXPECT_EQ(trace_path_to_store("/data/results.db", ""), "");
  // Relative paths are taken from the current directory, as the run named them.
  const fs::path here = fs::current_path();
  EXPECT_EQ(trace_path_to_store("out/results.db", "out/results-traces/a.json"), "results-traces/a.json");
  EXPECT_EQ(trace_path_to_store("results.db", "traces/a.json"), "traces/a.json");
  EXPECT_EQ(trace_path_to_store((here / "deep" / "results.db").string(), "traces/a.json"), "../traces/a.json");
}

TEST(TraceLocation, AStoredPathIsFoundFromWhereverTheDatabaseIsRead) {
  EXPECT_EQ(trace_file_of("/copy/results.db", kTraceBaseDatabase, "results-traces/run1-0.json"),
            "/copy/results-traces/run1-0.json");
  EXPECT_EQ(trace_file_of("../night/results.db", kTraceBaseDatabase, "results-traces/a.json"),
            "../night/results-traces/a.json");
  EXPECT_EQ(trace_file_of("results.db", kTraceBaseDatabase, "traces/a.json"), "traces/a.json");
  EXPECT_EQ(trace_file_of("/copy/results.db", kTraceBaseDatabase, "../traces/a.json"), "/traces/a.json");
  EXPECT_EQ(trace_file_of("/copy/results.db", kTraceBaseDatabase, "/abs/a.json"), "/abs/a.json");
  EXPECT_EQ(trace_file_of("/copy/results.db", kTraceBaseDatabase, ""), "");
  // Before schema 8: as given, relative to a directory only the run knew.
  EXPECT_EQ(trace_file_of("/copy/results.db", kTraceBaseWorkingDirectory, "traces/a.json"), "traces/a.json");
}

TEST(TraceLocation, StoringThenResolvingFromAnotherDirectoryFindsTheSameFile) {
  const std::string db = "/srv/sweeps/2026-12-01/results.db";
  const std::string trace = "/srv/sweeps/2026-12-01/results-traces/run3-17-sdpa_flash-1x32x4096x128-bf16.json";
  const std::string stored = trace_path_to_store(db, trace);
  EXPECT_EQ(trace_file_of(db, kTraceBaseDatabase, stored), trace);
  // The folder moved, database and traces together.
  EXPECT_EQ(trace_file_of("/mnt/copy/results.db", kTraceBaseDatabase, stored),
            "/mnt/copy/results-traces/run3-17-sdpa_flash-1x32x4096x128-bf16.json");
}

// The database named through a symbolic link to its folder (deep/link ->
// ../real): ".." in a stored path leaves the real folder, as the system reads
// it, whether the run or the reader named the database through the link.
TEST(TraceLocation, ALinkToTheDatabasesFolderDoesNotMisleadDotDot) {
  const attnsweep::testing::ScratchDirectory scratch("trace-location");
  fs::create_directories(scratch.path("real"));
  fs::create_directories(scratch.path("traces"));
  fs::create_directories(scratch.path("deep/er"));
  fs::create_directory_symlink("../../real", scratch.path("deep/er/link"));
  const std::string trace = scratch.write("traces/run1-0.json", "{}");
  const std::string through_link = scratch.path("deep/er/link/results.db");
  const std::string real = scratch.path("real/results.db");
  EXPECT_EQ(trace_path_to_store(through_link, trace), "../traces/run1-0.json");
  EXPECT_EQ(trace_path_to_store(real, trace), "../traces/run1-0.json");
  EXPECT_TRUE(fs::equivalent(trace_file_of(through_link, kTraceBaseDatabase, "../traces/run1-0.json"), trace));
  // A traces folder that is itself a link keeps its name: the pair still moves together.
  fs::create_directory_symlink("../traces", scratch.path("real/results-traces"));
  EXPECT_EQ(trace_path_to_store(real, scratch.path("real/results-traces/run1-0.json")), "results-traces/run1-0.json");
  EXPECT_EQ(trace_file_of(real, kTraceBaseDatabase, "results-traces/run1-0.json"),
            scratch.path("real/results-traces/run1-0.json"));
}

}  // namespace
}  // namespace attnsweep::storage
