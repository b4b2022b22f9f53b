// Who else computes on the GPU: the driver's process list against this process
// (runner/device/gpu_sharing.hpp; the NVML reading itself is held by
// GpuHardening.ANightlyBesideAnotherGpuProcessIsInconclusive on a GPU).
#include <gtest/gtest.h>

#include "runner/device/gpu_sharing.hpp"

namespace attnsweep {
namespace {

TEST(GpuSharing, CountsTheProcessesOtherThanThisOne) {
  EXPECT_EQ(other_processes_than_self({100}, 100), 0);
  EXPECT_EQ(other_processes_than_self({100, 200, 300}, 200), 2);
}

TEST(GpuSharing, InsideAPidNamespaceOneListedProcessIsTakenToBeThisOne) {
  // The driver lists host pids; this process (pid 7 in its container) holds a
  // context there, so one of the listed processes is itself.
  EXPECT_EQ(other_processes_than_self({4711}, 7), 0);
  EXPECT_EQ(other_processes_than_self({4711, 4712}, 7), 1);
  EXPECT_EQ(other_processes_than_self({}, 7), 0);
}

}  // namespace
}  // namespace attnsweep
