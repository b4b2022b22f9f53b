// Which build of an op library a run loaded (runs.op_libraries, issue 38): the
// fingerprint of one file is the head of its SHA-256; of several (a wheel's or a
// hub kernel's shared objects, as the loader chose them), of their names and
// digests; what cannot be read says so instead of failing the run.
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
  EXPECT_EQ(library_fingerprint(library, {library}), attnsweep::sha256_hex("build one").substr(0, 16));
  const std::string before = library_fingerprint(library, {library});
  write("lib/_ops.so", "build one\n");  // one byte more: a rebuilt library
  EXPECT_NE(library_fingerprint(library, {library}), before);
  // Read a chunk at a time: a file of several chunks gives the digest of all its bytes.
  const std::string big(3 * (1 << 20) + 17, 'x');
  const std::string large = write("lib/large.so", big);
  EXPECT_EQ(library_fingerprint(large, {large}), attnsweep::sha256_hex(big).substr(0, 16));
}

TEST_F(OpLibraryBuild, SeveralFilesAreTheirNamesAndDigestsInNameOrder) {
  const std::string folder = scratch_.path("wheel");
  const std::string kernels = write("wheel/fa3/_C.abi3.so", "kernels v1");
  const std::string helper = write("wheel/fa3/lib/libhelper.so", "helper");
  const std::string first = library_fingerprint(folder, {kernels, helper});
  ASSERT_EQ(first.size(), 16u) << first;
  EXPECT_EQ(library_fingerprint(folder, {helper, kernels}), first);  // the loader's order does not matter
  write("wheel/fa3/lib/libhelper.so", "helper v2");  // one shared object rebuilt
  EXPECT_NE(library_fingerprint(folder, {kernels, helper}), first);
  // The same bytes under another name is another build (a renamed variant folder).
  write("wheel/fa3/lib/libhelper.so", "helper");
  const std::string renamed = write("wheel/fa3/lib/libhelper2.so", "helper");
  EXPECT_NE(library_fingerprint(folder, {kernels, renamed}), first);
}

TEST_F(OpLibraryBuild, WhatCannotBeReadSaysWhy) {
  const std::string missing = scratch_.path("missing.so");
  EXPECT_EQ(library_fingerprint(missing, {missing}), "unreadable: cannot open " + missing);
  EXPECT_EQ(library_fingerprint(scratch_.path("empty"), {}), "unreadable: no shared object for " + scratch_.path("empty"));
}

TEST_F(OpLibraryBuild, TheRunsColumnIsOneJsonObjectByVariantOrEmptyWithoutOpLibraries) {
  EXPECT_EQ(op_library_builds({}), "");
  const auto builds = nlohmann::json::parse(
      op_library_builds({{"fa3", "0123456789abcdef"}, {"example", "unreadable: cannot open /x/\xff.so"}}));
  EXPECT_EQ(builds.size(), 2u);
  EXPECT_EQ(builds["fa3"], "0123456789abcdef");
  // Bytes that are no UTF-8 (a path) are replaced, not a failure of the run's start.
  EXPECT_EQ(builds["example"], "unreadable: cannot open /x/\xef\xbf\xbd.so");
}

}  // namespace
