// Which build of an op library a run loaded (runs.op_libraries, issue 38): the
// fingerprint of a file is the head of its SHA-256; of a folder, of its shared
// objects' names and digests, so that a rebuilt .so changes it and a README does
// not; what cannot be read says so instead of failing the run.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "runner/common/sha256.hpp"
#include "runner/variants/op_library_build.hpp"
#include "tests/support/scratch_directory.hpp"

namespace {

namespace fs = std::filesystem;
using attnsweep::library_fingerprint;
using attnsweep::op_library_builds;

class OpLibraryBuild : public ::testing::Test {
 protected:
  std::string write(const std::string& name, const std::string& bytes) {
    const fs::path path = scratch_.path(name);
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << bytes;
    return path.string();
  }
  attnsweep::testing::ScratchDirectory scratch_{"attnsweep-op-library-build"};
};

TEST_F(OpLibraryBuild, AFileIsTheHeadOfItsSha256AndChangesWithItsBytes) {
  const std::string library = write("lib/_ops.so", "build one");
  EXPECT_EQ(library_fingerprint(library), attnsweep::sha256_hex("build one").substr(0, 16));
  EXPECT_EQ(library_fingerprint(library).size(), 16u);
  const std::string before = library_fingerprint(library);
  write("lib/_ops.so", "build one\n");  // one byte more: a rebuilt library
  EXPECT_NE(library_fingerprint(library), before);
}

TEST_F(OpLibraryBuild, AFolderIsItsSharedObjectsOnly) {
  write("wheel/fa3/_C.abi3.so", "kernels v1");
  write("wheel/fa3/lib/libhelper.so.2", "helper");
  write("wheel/README.md", "readme");
  const std::string folder = scratch_.path("wheel");
  const std::string first = library_fingerprint(folder);
  ASSERT_EQ(first.size(), 16u) << first;
  write("wheel/README.md", "another readme");  // not a shared object: the same build
  EXPECT_EQ(library_fingerprint(folder), first);
  write("wheel/fa3/lib/libhelper.so.2", "helper v2");  // a shared object rebuilt
  EXPECT_NE(library_fingerprint(folder), first);
}

TEST_F(OpLibraryBuild, WhatCannotBeReadSaysWhy) {
  EXPECT_EQ(library_fingerprint(scratch_.path("missing.so")),
            "unreadable: " + scratch_.path("missing.so") + " is no file or folder");
  write("empty/notes.txt", "x");
  EXPECT_EQ(library_fingerprint(scratch_.path("empty")), "unreadable: no shared object under " + scratch_.path("empty"));
}

TEST_F(OpLibraryBuild, TheRunsColumnIsOneJsonObjectByVariantOrEmptyWithoutOpLibraries) {
  EXPECT_EQ(op_library_builds({}), "");
  attnsweep::OpLibrarySpec fa3;
  fa3.name = "fa3";
  fa3.library = write("fa3.so", "fa3 build");
  attnsweep::OpLibrarySpec example;
  example.name = "example";
  example.library = scratch_.path("gone.so");
  const auto builds = nlohmann::json::parse(op_library_builds({{"fa3", fa3}, {"example", example}}));
  EXPECT_EQ(builds.size(), 2u);
  EXPECT_EQ(builds["fa3"], attnsweep::sha256_hex("fa3 build").substr(0, 16));
  EXPECT_EQ(builds["example"], "unreadable: " + scratch_.path("gone.so") + " is no file or folder");
}

}  // namespace
