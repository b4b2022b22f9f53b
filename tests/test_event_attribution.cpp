// Attribution of profiler events to labelled forwards, on hand-built event
// lists shaped like Kineto's (the real profiler is exercised in
// test_profiler_cpu.cpp and on the GPU in tests/gpu).
#include <gtest/gtest.h>

#include "runner/profile/event_attribution.hpp"

namespace attnsweep {
namespace {

// An event on stream 7 (thread 0), without launch metadata.
ProfiledEvent event(Activity activity, const std::string& name, std::uint64_t start, std::uint64_t end,
                    std::uint64_t correlation = 0) {
  return {activity, name, start, end, correlation, /*stream=*/7};
}

// One forward at `base` (ns): an op that launches a kernel and a memset and
// copies once; kernels run later on the device timeline.
void add_forward(std::vector<ProfiledEvent>& events, int index, std::uint64_t base, std::uint64_t correlation) {
  events.push_back(event(Activity::user_annotation, forward_label(index), base, base + 10000));
  events.push_back(event(Activity::cpu_op, "aten::matmul", base + 100, base + 5100));
  events.push_back(event(Activity::cpu_op, "aten::mm", base + 200, base + 5000));
  events.push_back(event(Activity::cuda_runtime, "cudaLaunchKernel", base + 300, base + 1300, correlation));
  events.push_back(event(Activity::cuda_runtime, "cudaMemsetAsync", base + 1400, base + 1900, correlation + 1));
  events.push_back(event(Activity::cuda_runtime, "cudaMemcpyAsync", base + 6000, base + 7000, correlation + 2));
  // Device events, after the host window closed: attributed through correlation ids.
  events.push_back(event(Activity::kernel, "gemm", base + 20000, base + 24000, correlation));
  events.push_back(event(Activity::gpu_memset, "Memset (Device)", base + 24000, base + 24500, correlation + 1));
  events.push_back(event(Activity::gpu_memcpy, "Memcpy DtoD", base + 25000, base + 26000, correlation + 2));
}

TEST(EventAttribution, CountsPerForwardThroughCorrelationIds) {
  std::vector<ProfiledEvent> events;
  add_forward(events, 0, 1000000, 10);
  add_forward(events, 1, 2000000, 20);
  add_forward(events, 2, 3000000, 30);
  const ProfileSummary summary = attribute_events(events, 3, true);
  EXPECT_TRUE(summary.counts_consistent);
  EXPECT_EQ(summary.kernels_each_forward, (std::vector<int>{1, 1, 1}));
  EXPECT_EQ(summary.memset_each_forward, (std::vector<int>{1, 1, 1}));
  EXPECT_EQ(summary.memcpy_each_forward, (std::vector<int>{1, 1, 1}));
  EXPECT_EQ(summary.unattributed_device_events, 0);
  EXPECT_DOUBLE_EQ(summary.kernel_time_us_per_forward, 4.0 + 0.5 + 1.0);
  ASSERT_EQ(summary.kernels.size(), 3u);
  EXPECT_EQ(summary.kernels[0].name, "gemm");
  EXPECT_EQ(summary.kernels[0].kind, "kernel");
  EXPECT_DOUBLE_EQ(summary.kernels[0].launches_per_forward, 1);
  EXPECT_DOUBLE_EQ(summary.kernels[0].total_us, 4);
  EXPECT_EQ(summary.kernels[0].stream, 7);
}

// Issue 39: the first forward's kernels by name in the order they started on the GPU (the
// events arrive in any order), copies and memsets left out, the later forwards not repeated:
// how the counter pass names CUPTI's numbered ranges.
TEST(EventAttribution, TheFirstForwardsKernelsAreListedInTheOrderTheyStarted) {
  std::vector<ProfiledEvent> events;
  add_forward(events, 0, 1000000, 10);
  add_forward(events, 1, 2000000, 20);
  // Two more kernels of forward 0, recorded before the gemm but started after and before it.
  events.insert(events.begin(), event(Activity::kernel, "softmax", 1026000, 1027000, 10));
  events.insert(events.begin(), event(Activity::kernel, "fill", 1010000, 1011000, 10));
  const ProfileSummary summary = attribute_events(events, 2, true);
  EXPECT_EQ(summary.kernel_launch_order, (std::vector<std::string>{"fill", "gemm", "softmax"}));
}

TEST(EventAttribution, SelfTimeExcludesChildren) {
  std::vector<ProfiledEvent> events;
  add_forward(events, 0, 1000000, 10);
  const ProfileSummary summary = attribute_events(events, 1, true);
  std::map<std::string, OpStat> ops;
  for (const auto& op : summary.ops) ops[op.name] = op;
  // matmul 5.0 us contains mm 4.8 us; mm contains launch 1.0 and memset 0.5.
  EXPECT_NEAR(ops.at("aten::matmul").total_cpu_us, 5.0, 1e-9);
  EXPECT_NEAR(ops.at("aten::matmul").self_cpu_us, 0.2, 1e-9);
  EXPECT_NEAR(ops.at("aten::mm").self_cpu_us, 4.8 - 1.0 - 0.5, 1e-9);
  EXPECT_EQ(ops.at("cudaLaunchKernel").kind, "cuda_runtime");
  EXPECT_NEAR(ops.at("cudaMemcpyAsync").self_cpu_us, 1.0, 1e-9);
  EXPECT_EQ(summary.cpu_ops_per_forward, 2);
}

TEST(EventAttribution, DroppedKernelRecordsMakeCountsInconsistent) {
  std::vector<ProfiledEvent> events;
  add_forward(events, 0, 1000000, 10);
  add_forward(events, 1, 2000000, 20);
  // Kineto lost forward 0's kernel record (pytorch/pytorch#192021).
  events.erase(std::remove_if(events.begin(), events.end(),
                              [](const ProfiledEvent& e) { return e.activity == Activity::kernel && e.correlation_id == 10; }),
               events.end());
  const ProfileSummary summary = attribute_events(events, 2, true);
  EXPECT_FALSE(summary.counts_consistent);
  EXPECT_EQ(summary.kernels_each_forward, (std::vector<int>{0, 1}));
}

TEST(EventAttribution, MissingLabelOrEmptyCudaForwardIsInconsistent) {
  std::vector<ProfiledEvent> events;
  add_forward(events, 0, 1000000, 10);
  EXPECT_FALSE(attribute_events(events, 2, true).counts_consistent);  // forward 1 never recorded
  std::vector<ProfiledEvent> only_labels = {event(Activity::user_annotation, forward_label(0), 0, 100)};
  EXPECT_FALSE(attribute_events(only_labels, 1, true).counts_consistent);
  EXPECT_TRUE(attribute_events(only_labels, 1, false).counts_consistent);  // a CPU forward launches nothing
}

TEST(EventAttribution, DeviceWindowIsTheFallbackAndOthersAreUnattributed) {
  std::vector<ProfiledEvent> events;
  events.push_back(event(Activity::user_annotation, forward_label(0), 0, 1000));
  events.push_back(event(Activity::gpu_user_annotation, forward_label(0), 5000, 9000));
  events.push_back(event(Activity::kernel, "no_correlation", 6000, 7000, 0));
  events.push_back(event(Activity::kernel, "before_profiling", 100000, 101000, 999));
  const ProfileSummary summary = attribute_events(events, 1, true);
  EXPECT_EQ(summary.kernels_each_forward, (std::vector<int>{1}));
  EXPECT_EQ(summary.unattributed_device_events, 1);
}

}  // namespace
}  // namespace attnsweep

namespace attnsweep {
namespace {

TEST(EventAttribution, KernelLaunchMetadataIsParsedFromKinetosFragment) {
  std::vector<ProfiledEvent> events;
  add_forward(events, 0, 1000000, 10);
  for (auto& e : events) {
    if (e.activity == Activity::kernel) {
      // As seen for flash at 8x16x1024x64 bf16 on H200 (../shared/LIBTORCH.md).
      e.metadata_json = "\"queued\": 0, \"device\": 0, \"context\": 1, \"stream\": 7, \"correlation\": 10, "
                        "\"registers per thread\": 255, \"shared memory\": 49152, \"blocks per SM\": 7.76, "
                        "\"warps per SM\": 31.0, \"grid\": [8, 8, 16], \"block\": [128, 1, 1], "
                        "\"est. achieved occupancy %\": 13";
    }
  }
  const ProfileSummary summary = attribute_events(events, 1, true);
  const KernelStat& gemm = summary.kernels.front();
  ASSERT_EQ(gemm.name, "gemm");
  EXPECT_EQ(gemm.grid, "[8,8,16]");
  EXPECT_EQ(gemm.block, "[128,1,1]");
  EXPECT_EQ(gemm.registers_per_thread, 255);
  EXPECT_EQ(gemm.shared_memory_bytes, 49152);
  EXPECT_DOUBLE_EQ(*gemm.blocks_per_sm, 7.76);
  EXPECT_DOUBLE_EQ(*gemm.warps_per_sm, 31.0);
  EXPECT_DOUBLE_EQ(*gemm.est_occupancy_pct, 13);
  // The memset carries no launch metadata and gets none.
  for (const auto& k : summary.kernels) {
    if (k.kind != "kernel") EXPECT_FALSE(k.registers_per_thread.has_value()) << k.name;
  }
}

TEST(EventAttribution, MalformedMetadataIsIgnored) {
  std::vector<ProfiledEvent> events;
  add_forward(events, 0, 1000000, 10);
  for (auto& e : events) {
    if (e.activity == Activity::kernel) e.metadata_json = "\"grid\": [8, 8";
  }
  const ProfileSummary summary = attribute_events(events, 1, true);
  EXPECT_TRUE(summary.kernels.front().grid.empty());
  EXPECT_EQ(summary.kernels_each_forward, (std::vector<int>{1}));
}

}  // namespace
}  // namespace attnsweep
