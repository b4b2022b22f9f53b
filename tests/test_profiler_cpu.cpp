// The real Kineto profiler on the CPU: labelled forwards, aten operators with
// self times, and no device activity.
#include <gtest/gtest.h>
#include <torch/csrc/autograd/grad_mode.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include "runner/measure/case_runner.hpp"
#include "runner/measure/inputs.hpp"
#include "runner/profile/kineto_profiler.hpp"
#include "runner/variants/registry.hpp"

namespace attnsweep {
namespace {

std::map<std::string, OpStat> profile_ops(const std::string& variant_name, ProfileSummary* summary_out = nullptr,
                                          const std::string& trace = "") {
  const Case c{0, variant_name, Shape{1, 2, 2, 32, 32, 16}, Dtype::fp32, true};
  const AttentionInputs inputs = make_inputs(c, Device::cpu(), 0);
  const Variant* variant = find_variant(variant_name);
  at::NoGradGuard no_grad;
  KinetoProfiler profiler(Device::cpu());
  const auto events = profiler.profile([&] { variant->forward(inputs); }, 3, trace);
  int labels = 0;
  for (const auto& e : events) labels += e.activity == Activity::user_annotation ? 1 : 0;
  EXPECT_EQ(labels, 3);
  const ProfileSummary summary = attribute_events(events, 3, false);
  if (summary_out) *summary_out = summary;
  std::map<std::string, OpStat> ops;
  for (const auto& op : summary.ops) ops[op.name] = op;
  return ops;
}

// CUPTI left attached after a session slows every later CUDA call (docs/measurement.md):
// a CUDA profiler asks Kineto to tear it down, unless the user chose otherwise. A CPU
// profiler must not, and removes a TEARDOWN_CUPTI=1 it finds: the teardown waits for a
// CUDA call that a CPU run never makes.
TEST(CpuProfiler, AsksForCuptiTeardownOnlyForCudaAndUnlessTheUserChose) {
  const char* before = std::getenv("TEARDOWN_CUPTI");
  const std::string saved = before ? before : "";
  unsetenv("TEARDOWN_CUPTI");
  { KinetoProfiler profiler(Device::cpu()); }
  EXPECT_EQ(std::getenv("TEARDOWN_CUPTI"), nullptr);
  { KinetoProfiler profiler(Device::cuda(0)); }  // constructing touches no GPU
  ASSERT_NE(std::getenv("TEARDOWN_CUPTI"), nullptr);
  EXPECT_STREQ(std::getenv("TEARDOWN_CUPTI"), "1");
  EXPECT_EQ(KinetoProfiler::cupti_kept_by_user(), "");
  setenv("TEARDOWN_CUPTI", "0", 1);
  { KinetoProfiler profiler(Device::cuda(0)); }
  EXPECT_STREQ(std::getenv("TEARDOWN_CUPTI"), "0");
  EXPECT_EQ(KinetoProfiler::cupti_kept_by_user(), "0");  // named in runs.timing_protocol
  { KinetoProfiler profiler(Device::cpu()); }  // any value but "1" is left alone
  EXPECT_STREQ(std::getenv("TEARDOWN_CUPTI"), "0");
  setenv("TEARDOWN_CUPTI", "1", 1);
  { KinetoProfiler profiler(Device::cpu()); }
  EXPECT_EQ(std::getenv("TEARDOWN_CUPTI"), nullptr);
  if (before) setenv("TEARDOWN_CUPTI", saved.c_str(), 1); else unsetenv("TEARDOWN_CUPTI");
}

TEST(CpuProfiler, NaiveForwardShowsItsOperatorsAndNoDeviceActivity) {
  ProfileSummary summary;
  const auto ops = profile_ops("naive", &summary);
  EXPECT_TRUE(summary.counts_consistent);
  EXPECT_TRUE(summary.kernels.empty());
  EXPECT_EQ(summary.kernels_each_forward, (std::vector<int>{0, 0, 0}));
  EXPECT_EQ(summary.memcpy_each_forward, (std::vector<int>{0, 0, 0}));
  ASSERT_TRUE(ops.count("aten::matmul"));
  EXPECT_DOUBLE_EQ(ops.at("aten::matmul").calls_per_forward, 2);
  EXPECT_DOUBLE_EQ(ops.at("aten::softmax").calls_per_forward, 1);
  EXPECT_DOUBLE_EQ(ops.at("aten::masked_fill").calls_per_forward, 1);  // out of place
  EXPECT_EQ(ops.at("aten::matmul").kind, "op");
  EXPECT_GT(ops.at("aten::matmul").total_cpu_us, 0);
  EXPECT_LE(ops.at("aten::matmul").self_cpu_us, ops.at("aten::matmul").total_cpu_us);
  EXPECT_GT(summary.cpu_ops_per_forward, 5);
}

TEST(CpuProfiler, InPlaceMaskingUsesMaskedFillUnderscore) {
  const auto ops = profile_ops("naive_inplace");
  EXPECT_DOUBLE_EQ(ops.at("aten::masked_fill_").calls_per_forward, 1);
  EXPECT_FALSE(ops.count("aten::masked_fill"));
}

TEST(CpuProfiler, FlashOnCpuRunsPyTorchsCpuKernel) {
  const auto ops = profile_ops("sdpa_flash");
  EXPECT_TRUE(ops.count("aten::_scaled_dot_product_flash_attention_for_cpu"));
  EXPECT_FALSE(ops.count("aten::matmul"));
}

TEST(CpuProfiler, WritesAChromeTraceThatPerfettoCanRead) {
  const auto path = (std::filesystem::temp_directory_path() / "attnsweep-profiler-trace.json").string();
  std::filesystem::remove(path);
  profile_ops("naive", nullptr, path);
  std::ifstream file(path);
  ASSERT_TRUE(file.good());
  const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("\"traceEvents\""), std::string::npos);
  EXPECT_NE(text.find("attnsweep::forward#2"), std::string::npos);
  std::filesystem::remove(path);
}

TEST(CpuProfiler, ATraceThatCannotBeWrittenIsReportedNotClaimed) {
  const Case c{0, "naive", Shape{1, 2, 2, 32, 32, 16}, Dtype::fp32, true};
  const AttentionInputs inputs = make_inputs(c, Device::cpu(), 0);
  const Variant* variant = find_variant("naive");
  at::NoGradGuard no_grad;
  KinetoProfiler profiler(Device::cpu());
  const auto missing = (std::filesystem::temp_directory_path() / "attnsweep-no-such-folder" / "t.json").string();
  std::filesystem::remove_all(std::filesystem::path(missing).parent_path());
  profiler.profile([&] { variant->forward(inputs); }, 2, missing);
  EXPECT_EQ(profiler.last_trace_error().rfind("trace not written to " + missing, 0), 0u) << profiler.last_trace_error();
  profiler.profile([&] { variant->forward(inputs); }, 2, "");
  EXPECT_EQ(profiler.last_trace_error(), "");

  // Through the case runner: a warning on the case, and no trace_path naming a file that is not there.
  MeasureSettings settings;
  settings.warmup = 1;
  settings.min_samples = 3;
  settings.max_samples = 3;
  settings.profiled_forwards = 2;
  const CaseResult result = CaseRunner(Device::cpu(), settings, 0).run(c, missing);
  ASSERT_EQ(result.status, CaseStatus::ok) << result.error_message;
  EXPECT_EQ(result.trace_path, "");
  ASSERT_EQ(result.warnings.size(), 1u);
  EXPECT_EQ(result.warnings[0].rfind("trace not written to " + missing, 0), 0u) << result.warnings[0];
}

TEST(CpuProfiler, AnIncompleteTraceIsRefusedAndRemoved) {
  const auto path = (std::filesystem::temp_directory_path() / "attnsweep-truncated-trace.json").string();
  std::ofstream(path) << "{\"traceEvents\": [{\"name\": \"x\"},";
  const std::string problem = check_trace_file(path);
  EXPECT_NE(problem.find("is incomplete"), std::string::npos) << problem;
  EXPECT_FALSE(std::filesystem::exists(path));
  std::ofstream(path) << "";
  EXPECT_NE(check_trace_file(path).find("is incomplete (0 bytes"), std::string::npos);
  std::ofstream(path) << "{\"traceEvents\": []}\n";
  EXPECT_EQ(check_trace_file(path), "");
  EXPECT_TRUE(std::filesystem::exists(path));
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace attnsweep
