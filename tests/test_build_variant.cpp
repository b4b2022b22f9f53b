// The build folder of a hub kernel that this process can load, ranked as
// huggingface/kernels ranks them (kernels/src/kernels/variants.py): the cases
// below are that file's rules, one by one, for torch 2.11 with CUDA 13.0.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "runner/variants/build_variant.hpp"

namespace attnsweep {
namespace {

BuildTarget torch211_cu130() {
  BuildTarget target;
  target.torch_major = 2;
  target.torch_minor = 11;
  target.cuda_major = 13;
  target.cuda_minor = 0;
  return target;
}

TEST(BuildVariant, ParsesTorchStableAbiAndNoarchFolders) {
  const auto torch = parse_build_variant("torch211-cxx11-cu130-x86_64-linux");
  ASSERT_TRUE(torch.has_value());
  EXPECT_EQ(torch->framework, BuildVariant::Framework::torch);
  EXPECT_EQ(torch->framework_major, 2);
  EXPECT_EQ(torch->framework_minor, 11);
  EXPECT_EQ(torch->cxx11_abi, std::optional<bool>(true));
  EXPECT_EQ(torch->backend, "cu");
  EXPECT_EQ(torch->backend_major, std::optional<int>(13));
  EXPECT_EQ(torch->backend_minor, std::optional<int>(0));
  EXPECT_EQ(torch->cpu, "x86_64");
  EXPECT_EQ(torch->os, "linux");

  const auto stable = parse_build_variant("torch-stable-abi210-cu126-x86_64-linux");
  ASSERT_TRUE(stable.has_value());
  EXPECT_EQ(stable->framework, BuildVariant::Framework::torch_stable_abi);
  EXPECT_EQ(stable->framework_minor, 10);
  EXPECT_EQ(stable->backend_major, std::optional<int>(12));
  EXPECT_EQ(stable->backend_minor, std::optional<int>(6));
  EXPECT_FALSE(stable->cxx11_abi.has_value());

  const auto untagged = parse_build_variant("torch29-cpu-aarch64-darwin");
  ASSERT_TRUE(untagged.has_value());
  EXPECT_FALSE(untagged->cxx11_abi.has_value());
  EXPECT_EQ(untagged->backend, "cpu");
  EXPECT_FALSE(untagged->backend_major.has_value());

  const auto universal = parse_build_variant("torch-universal");
  ASSERT_TRUE(universal.has_value());
  EXPECT_EQ(universal->framework, BuildVariant::Framework::noarch);
  EXPECT_EQ(universal->backend, "universal");

  std::string why;
  EXPECT_FALSE(parse_build_variant("README.md", &why).has_value());
  EXPECT_NE(why.find("not a build variant"), std::string::npos) << why;
  EXPECT_FALSE(parse_build_variant("torch211-cxx11-cu130", &why).has_value());
  EXPECT_EQ(why, "expected BACKEND-CPU-OS after the framework");
}

TEST(BuildVariant, RanksAsTheKernelsPackageDoes) {
  const std::vector<std::string> folders = {
      "torch210-cxx11-cu130-x86_64-linux",        // another torch
      "torch211-cxx11-cu126-x86_64-linux",        // CUDA 12: another major
      "torch-universal",                          // noarch: last of the accepted
      "torch211-cxx11-cu130-x86_64-linux",        // exact torch and CUDA
      "torch-stable-abi212-cu130-x86_64-linux",   // a stable ABI newer than this torch
      "torch211-cxx11-cu131-x86_64-linux",        // a CUDA minor above this one's
      "torch211-cxx11-cu129-x86_64-linux",        // another CUDA major
      "torch-stable-abi210-cu130-x86_64-linux",   // stable ABI at or below torch: preferred
      "torch211-cxx11-cu130-aarch64-linux",       // another CPU
      "torch211-cxx98-cu130-x86_64-linux",        // the other C++ ABI
      "torch211-cu130-x86_64-linux",              // untagged: before the cxx11-tagged one
      "torch-stable-abi29-cu130-x86_64-linux",    // an older stable ABI: after the newer one
      "torch211-cxx11-rocm64-x86_64-linux",       // another backend
      "notes"};
  const auto ranked = rank_build_variants(folders, torch211_cu130());
  ASSERT_EQ(ranked.size(), folders.size());
  const std::vector<std::string> accepted = {
      "torch-stable-abi210-cu130-x86_64-linux", "torch-stable-abi29-cu130-x86_64-linux",
      "torch211-cu130-x86_64-linux", "torch211-cxx11-cu130-x86_64-linux", "torch-universal"};
  for (std::size_t i = 0; i < accepted.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(ranked[i].name, accepted[i]);
    EXPECT_TRUE(ranked[i].accepted) << ranked[i].reason;
  }
  std::map<std::string, std::string> reasons;
  for (std::size_t i = accepted.size(); i < ranked.size(); ++i) {
    EXPECT_FALSE(ranked[i].accepted) << ranked[i].name;
    reasons[ranked[i].name] = ranked[i].reason;
  }
  EXPECT_EQ(reasons["torch210-cxx11-cu130-x86_64-linux"], "built for torch 2.10, this is torch 2.11");
  EXPECT_EQ(reasons["torch-stable-abi212-cu130-x86_64-linux"], "stable ABI 2.12 is newer than this torch (2.11)");
  EXPECT_EQ(reasons["torch211-cxx11-cu131-x86_64-linux"],
            "built for CUDA 13.1, this is CUDA 13.0 (same major, minor at most this one's)");
  EXPECT_EQ(reasons["torch211-cxx11-cu126-x86_64-linux"],
            "built for CUDA 12.6, this is CUDA 13.0 (same major, minor at most this one's)");
  EXPECT_EQ(reasons["torch211-cxx11-cu129-x86_64-linux"],
            "built for CUDA 12.9, this is CUDA 13.0 (same major, minor at most this one's)");
  EXPECT_EQ(reasons["torch211-cxx11-cu130-aarch64-linux"], "CPU aarch64 is not this system's (x86_64)");
  EXPECT_EQ(reasons["torch211-cxx98-cu130-x86_64-linux"], "built with the cxx98 ABI, this torch uses the cxx11 one");
  EXPECT_EQ(reasons["torch211-cxx11-rocm64-x86_64-linux"], "backend rocm is not this system's (cu)");
  EXPECT_NE(reasons["notes"].find("not a build variant"), std::string::npos);
}

// CUDA x.y takes builds for x.z with z <= y, the highest z first.
TEST(BuildVariant, TheHighestCudaMinorNotAboveThisOnesWins) {
  BuildTarget cuda128 = torch211_cu130();
  cuda128.cuda_major = 12;
  cuda128.cuda_minor = 8;
  const auto ranked = rank_build_variants({"torch211-cxx11-cu126-x86_64-linux", "torch211-cxx11-cu129-x86_64-linux",
                                           "torch211-cxx11-cu128-x86_64-linux", "torch211-cxx11-cu118-x86_64-linux"},
                                          cuda128);
  EXPECT_EQ(ranked[0].name, "torch211-cxx11-cu128-x86_64-linux");
  EXPECT_EQ(ranked[1].name, "torch211-cxx11-cu126-x86_64-linux");
  EXPECT_TRUE(ranked[0].accepted && ranked[1].accepted);
  EXPECT_FALSE(ranked[2].accepted || ranked[3].accepted);
}

TEST(BuildVariant, ACpuOnlyTorchTakesCpuBuildsAndNoCudaOnes) {
  BuildTarget cpu = torch211_cu130();
  cpu.cuda_major.reset();
  cpu.cuda_minor.reset();
  const auto ranked = rank_build_variants(
      {"torch211-cxx11-cu130-x86_64-linux", "torch211-cxx11-cpu-x86_64-linux", "torch-cuda", "torch-cpu"}, cpu);
  EXPECT_EQ(ranked[0].name, "torch211-cxx11-cpu-x86_64-linux");
  EXPECT_TRUE(ranked[0].accepted);
  EXPECT_EQ(ranked[1].name, "torch-cpu");
  EXPECT_TRUE(ranked[1].accepted);
  EXPECT_FALSE(ranked[2].accepted);
  EXPECT_FALSE(ranked[3].accepted);
  EXPECT_EQ(ranked[2].reason, "a CUDA build, and this torch has no CUDA");
  EXPECT_EQ(ranked[3].reason, "backend cuda is neither this system's (cpu) nor universal");
}

}  // namespace
}  // namespace attnsweep
