// The hardware counters' catalogue and arithmetic (issue 39): which CUPTI metrics
// each counter asks for, and how one counter pass's launches become the case's
// per-pass figures and its kernels' per-name figures.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "runner/measure/counters.hpp"

namespace attnsweep {
namespace {

bool has(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

TEST(Counters, NamesParseAndEachCounterAsksForItsOwnMetricsAndTheDuration) {
  EXPECT_EQ(counter_names(), (std::vector<std::string>{"dram_bytes", "l2_hit_rate", "sm_throughput", "tensor_pipe"}));
  EXPECT_EQ(parse_counter("l2_hit_rate"), Counter::l2_hit_rate);
  EXPECT_FALSE(parse_counter("dram__bytes_read.sum").has_value());
  EXPECT_EQ(to_string(Counter::tensor_pipe), "tensor_pipe");

  EXPECT_EQ(counter_metric_candidates({}), (std::vector<std::string>{"gpu__time_duration.sum"}));
  const auto dram = counter_metric_candidates({Counter::dram_bytes, Counter::dram_bytes});
  EXPECT_EQ(dram, (std::vector<std::string>{"gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum"}));
  const auto all = counter_metric_candidates({Counter::dram_bytes, Counter::l2_hit_rate, Counter::sm_throughput,
                                              Counter::tensor_pipe});
  EXPECT_TRUE(has(all, "lts__t_sector_hit_rate.pct"));
  EXPECT_TRUE(has(all, "lts__t_sectors.sum"));
  EXPECT_TRUE(has(all, "sm__throughput.avg.pct_of_peak_sustained_elapsed"));
  EXPECT_TRUE(has(all, "sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_elapsed"));
  EXPECT_TRUE(has(all, "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed"));
}

// Three launches: two of a matmul-like kernel, one of a softmax; values written out.
TEST(Counters, APassSumsBytesWeighsHitRatesBySectorsAndSharesByTime) {
  const std::vector<std::string> metrics{
      "gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_sectors.sum",
      "lts__t_sector_hit_rate.pct", "sm__throughput.avg.pct_of_peak_sustained_elapsed",
      "sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_elapsed",
      "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed"};
  const std::vector<CounterLaunch> launches{
      {"gemm", {1000, 4e6, 1e6, 100, 50, 80, 60, 0}},    // 1 us, 50% of 100 sectors hit, wgmma 60%
      {"softmax", {3000, 8e6, 8e6, 300, 10, 40, 0, 0}},  // 3 us, no tensor pipe
      {"gemm", {1000, 2e6, 1e6, 100, 90, 80, 0, 70}},    // the same name on the mma.sync pipe at 70%
  };
  const CounterFigures figures = sum_counter_launches(metrics, launches);
  EXPECT_EQ(figures.pass.launches, 3);
  EXPECT_DOUBLE_EQ(*figures.pass.kernel_us, 5.0);
  EXPECT_DOUBLE_EQ(*figures.pass.dram_read_bytes, 14e6);
  EXPECT_DOUBLE_EQ(*figures.pass.dram_write_bytes, 10e6);
  // hits: 50 + 30 + 90 of 500 sectors
  EXPECT_DOUBLE_EQ(*figures.pass.l2_hit_rate, 170.0 / 500.0);
  // by time: (0.8 * 1 + 0.4 * 3 + 0.8 * 1) / 5
  EXPECT_DOUBLE_EQ(*figures.pass.sm_throughput, 2.8 / 5.0);
  // the busier pipe of each launch: (0.6 * 1 + 0 * 3 + 0.7 * 1) / 5
  EXPECT_DOUBLE_EQ(*figures.pass.tensor_pipe, 1.3 / 5.0);

  ASSERT_EQ(figures.kernels.size(), 2u);
  EXPECT_EQ(figures.kernels[0].name, "gemm");  // in the order of first launch
  EXPECT_EQ(figures.kernels[0].launches, 2);
  EXPECT_DOUBLE_EQ(*figures.kernels[0].figures.dram_read_bytes, 6e6);
  EXPECT_DOUBLE_EQ(*figures.kernels[0].figures.l2_hit_rate, 140.0 / 200.0);
  EXPECT_DOUBLE_EQ(*figures.kernels[0].figures.tensor_pipe, 0.65);
  EXPECT_EQ(figures.kernels[1].name, "softmax");
  EXPECT_DOUBLE_EQ(*figures.kernels[1].figures.sm_throughput, 0.4);
}

TEST(Counters, ACounterNotReadStaysEmptyAndSharesStayWithinOne) {
  const std::vector<std::string> metrics{"gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum",
                                         "sm__throughput.avg.pct_of_peak_sustained_elapsed"};
  const CounterFigures figures = sum_counter_launches(metrics, {{"k", {2000, 10, 0, 100.0000001}}});
  EXPECT_DOUBLE_EQ(*figures.pass.dram_read_bytes, 10);
  EXPECT_DOUBLE_EQ(*figures.pass.dram_write_bytes, 0);
  EXPECT_FALSE(figures.pass.l2_hit_rate.has_value());
  EXPECT_FALSE(figures.pass.tensor_pipe.has_value());
  EXPECT_DOUBLE_EQ(*figures.pass.sm_throughput, 1.0);  // CUPTI's 100.0000001% kept at the peak

  const CounterFigures none = sum_counter_launches(metrics, {});
  EXPECT_EQ(none.pass.launches, 0);
  EXPECT_FALSE(none.pass.dram_read_bytes.has_value());
  EXPECT_TRUE(none.kernels.empty());
}

TEST(Counters, KernelFiguresGoToTheProfilesKernelOfTheSameNameAndStrangersAreNamed) {
  std::vector<KernelStat> kernels(3);
  kernels[0].name = "flash_fwd";
  kernels[0].kind = "kernel";
  kernels[1].name = "flash_fwd";  // a copy of the same name is no range
  kernels[1].kind = "memcpy";
  kernels[2].name = "softmax";
  kernels[2].kind = "kernel";
  CounterFigures figures;
  PassCounters flash;
  flash.dram_read_bytes = 5e7;
  flash.dram_write_bytes = 1e7;
  flash.tensor_pipe = 0.5;
  figures.kernels = {{"flash_fwd", 1, flash}, {"vectorized_elementwise", 2, PassCounters{}}};
  EXPECT_EQ(attach_kernel_counters(figures, kernels), "vectorized_elementwise");
  EXPECT_DOUBLE_EQ(*kernels[0].dram_read_bytes, 5e7);
  EXPECT_DOUBLE_EQ(*kernels[0].dram_write_bytes, 1e7);
  EXPECT_DOUBLE_EQ(*kernels[0].tensor_pipe, 0.5);
  EXPECT_FALSE(kernels[0].l2_hit_rate.has_value());
  EXPECT_FALSE(kernels[1].dram_read_bytes.has_value());
  EXPECT_FALSE(kernels[2].dram_read_bytes.has_value());
}

// CUPTI's automatic ranges are numbered ("0", "1", ... on the H100); the profile's launch
// order names them, and only when both saw the same number of launches.
TEST(Counters, NumberedRangesTakeTheProfilesNamesInLaunchOrder) {
  std::vector<CounterLaunch> launches{{"0", {1}}, {"1", {2}}, {"2", {3}}};
  EXPECT_FALSE(name_launches_in_order(launches, {"gemm", "softmax"}));
  EXPECT_EQ(launches[0].name, "0");
  EXPECT_TRUE(name_launches_in_order(launches, {"gemm", "softmax", "gemm"}));
  EXPECT_EQ(launches[0].name, "gemm");
  EXPECT_EQ(launches[1].name, "softmax");
  EXPECT_EQ(launches[2].name, "gemm");
  const CounterFigures figures = sum_counter_launches({"dram__bytes_read.sum"}, launches);
  ASSERT_EQ(figures.kernels.size(), 2u);
  EXPECT_EQ(figures.kernels[0].launches, 2);
  EXPECT_DOUBLE_EQ(*figures.kernels[0].figures.dram_read_bytes, 4);
  std::vector<CounterLaunch> none;
  EXPECT_FALSE(name_launches_in_order(none, {}));
}

// Start order is launch order on one stream only; copies on another stream do not count.
TEST(Counters, LaunchOrderIsTrustedForKernelsOfOneStreamOnly) {
  std::vector<KernelStat> kernels(3);
  kernels[0].name = "gemm";
  kernels[0].kind = "kernel";
  kernels[0].stream = 7;
  kernels[1].name = "Memcpy DtoD";
  kernels[1].kind = "memcpy";
  kernels[1].stream = 9;
  kernels[2].name = "softmax";
  kernels[2].kind = "kernel";
  kernels[2].stream = 7;
  EXPECT_TRUE(kernels_on_one_stream(kernels));
  kernels[2].stream = 8;
  EXPECT_FALSE(kernels_on_one_stream(kernels));
  EXPECT_TRUE(kernels_on_one_stream({}));
}

}  // namespace
}  // namespace attnsweep
