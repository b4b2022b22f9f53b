// GPU checks: they skip where no CUDA device exists and run for real on the
// device machine. Kernel counts are compared with torch.profiler in Python on
// the same GPU (scripts/torch_reference.py), never with hard-coded numbers.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <optional>
#include <memory>
#include <string>

#include <ATen/ATen.h>

#include <cstdlib>
#include <vector>

#include "runner/measure/case_runner.hpp"
#include "runner/device/device.hpp"
#include "runner/device/nvml.hpp"
#include "runner/measure/inputs.hpp"
#include "tests/support/few_samples.hpp"

namespace attnsweep {
namespace {

#define SKIP_WITHOUT_CUDA() \
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device here"

Case study_case(const std::string& variant, const std::string& dtype = "bf16") {
  return Case{0, variant, Shape{8, 16, 16, 1024, 1024, 64}, *parse_dtype(dtype), true};
}

// The built-in variants, in the order scripts/torch_reference.py prints them (its 7 lines).
constexpr const char* kBuiltInVariants[] = {"naive",      "naive_inplace", "sdpa_math", "sdpa_efficient",
                                            "sdpa_flash", "sdpa_cudnn",    "sdpa_auto"};

// Warm-up 3, 5 to 20 samples, at most 2 s, 5 profiled forwards.
MeasureSettings quick_settings() { return attnsweep::testing::few_samples(3, 5, 20, 2, 5); }

struct PythonCounts {
  std::string status;
  int kernels = -1, memcpy = -1, memset = -1;
  // With --pass: the forward's error, or the backward's dq, dk, dv errors, against float64.
  std::optional<double> rel_error, grad_rel_error_q, grad_rel_error_k, grad_rel_error_v;
};

// Runs the independent Python measurement once for all study variants.
// `more`: further arguments (" --shapes ..."); without them, the study's shape.
std::map<std::string, PythonCounts> python_counts(const std::string& dtype, const std::string& pass = "forward",
                                                  const std::string& more = "") {
  const char* python = std::getenv("ATTNSWEEP_PYTHON");
  const std::string command = std::string(python ? python : "python3") + " " ATTNSWEEP_SOURCE_DIR
                              "/scripts/torch_reference.py --counts-only --dtype " + dtype +
                              (pass == "forward" ? "" : " --pass " + pass) + more;
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  std::map<std::string, PythonCounts> out;
  if (!pipe) return out;
  char line[4096];
  while (fgets(line, sizeof line, pipe.get())) {
    const std::string text = line;
    auto field = [&](const std::string& key) -> std::string {
      const auto at = text.find("\"" + key + "\": ");
      if (at == std::string::npos) return "";
      const auto start = at + key.size() + 4;
      const auto end = text.find_first_of(",}", start);
      std::string value = text.substr(start, end - start);
      if (!value.empty() && value.front() == '"') value = value.substr(1, value.size() - 2);
      return value;
    };
    PythonCounts counts;
    counts.status = field("status");
    if (counts.status == "ok") {
      counts.kernels = static_cast<int>(std::stod(field("kernels")));
      counts.memcpy = static_cast<int>(std::stod(field("memcpy")));
      counts.memset = static_cast<int>(std::stod(field("memset")));
      const auto number = [&](const std::string& key) {
        const std::string value = field(key);
        return value.empty() ? std::nullopt : std::optional<double>(std::stod(value));
      };
      counts.rel_error = number("rel_error");
      counts.grad_rel_error_q = number("grad_rel_error_q");
      counts.grad_rel_error_k = number("grad_rel_error_k");
      counts.grad_rel_error_v = number("grad_rel_error_v");
    }
    out[field("variant")] = counts;
  }
  return out;
}

// One case attnsweep ran against Python's line for it: refused where Python
// refused it; where both ran, the same kernel, memcpy and memset counts,
// numerics within the bound and (with `errors`) errors within 2x of Python's:
// the output's in a forward, dq, dk and dv in a backward.
void expect_as_python(const CaseResult& r, const PythonCounts& python, Pass pass, bool errors = true) {
  if (python.status != "ok") {
    EXPECT_EQ(r.status, CaseStatus::unsupported) << r.error_message;
    EXPECT_FALSE(r.error_message.empty());
    return;
  }
  ASSERT_EQ(r.status, CaseStatus::ok) << r.error_message;
  ASSERT_TRUE(r.profile.has_value());
  EXPECT_EQ(r.profile->kernels_each_forward.front(), python.kernels);
  EXPECT_EQ(r.profile->memcpy_each_forward.front(), python.memcpy);
  EXPECT_EQ(r.profile->memset_each_forward.front(), python.memset);
  EXPECT_EQ(r.numerics, NumericsVerdict::ok);
  if (!errors) return;
  const auto within_two = [](const std::optional<double>& ours, const std::optional<double>& theirs) {
    ASSERT_TRUE(ours.has_value());
    ASSERT_TRUE(theirs.has_value());
    EXPECT_GT(*ours, 0.5 * *theirs);
    EXPECT_LT(*ours, 2.0 * *theirs);
  };
  if (pass == Pass::forward) {
    within_two(r.rel_error, python.rel_error);
  } else {
    within_two(r.grad_rel_error_q, python.grad_rel_error_q);
    within_two(r.grad_rel_error_k, python.grad_rel_error_k);
    within_two(r.grad_rel_error_v, python.grad_rel_error_v);
  }
}

// attnsweep and the Python reference must time the very same inputs: drawn on
// the GPU from its generator with the config's seed, in float32, then cast.
TEST(GpuCases, InputsHaveTheSameBitsAsPythonsDrawOnTheSameGpu) {
  SKIP_WITHOUT_CUDA();
  const char* python = std::getenv("ATTNSWEEP_PYTHON");
  const std::string command = std::string(python ? python : "python3") + " " ATTNSWEEP_SOURCE_DIR
                              "/scripts/torch_reference.py --inputs-only --shapes 2x4x256x64 --dtypes bf16 --seed 7";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  ASSERT_TRUE(pipe);
  char line[1024] = {};
  ASSERT_TRUE(fgets(line, sizeof line, pipe.get())) << "no output from " << command;
  std::vector<double> expected;
  for (char* cursor = line; *cursor && *cursor != '\n';) {
    char* end = nullptr;
    expected.push_back(std::strtod(cursor, &end));
    if (end == cursor) break;
    cursor = end;
  }
  ASSERT_EQ(expected.size(), 6u) << line;
  const AttentionInputs inputs = make_inputs(Case{0, "naive", Shape{2, 4, 4, 256, 256, 64}, Dtype::bf16, true}, Device::cuda(0), 7);
  const at::Tensor first = inputs.query.index({0, 0, 0}).narrow(0, 0, 4).to(at::kDouble).cpu();
  for (int i = 0; i < 4; ++i) EXPECT_EQ(first[i].item<double>(), expected[static_cast<std::size_t>(i)]) << i;
  EXPECT_EQ(inputs.key.index({-1, -1, -1, -1}).to(at::kDouble).item<double>(), expected[4]);
  EXPECT_NEAR(inputs.value.to(at::kDouble).sum().item<double>(), expected[5], 1e-9 * std::abs(expected[5]) + 1e-9);
  // Drawn in float32 and cast: the same seed gives the same values in another dtype, up to rounding.
  const AttentionInputs fp32 = make_inputs(Case{0, "naive", Shape{2, 4, 4, 256, 256, 64}, Dtype::fp32, true}, Device::cuda(0), 7);
  EXPECT_TRUE(at::equal(fp32.query.to(at::kBFloat16), inputs.query));
}

TEST(GpuCases, KernelCountsMatchTorchProfilerInPython) {
  SKIP_WITHOUT_CUDA();
  const auto expected = python_counts("bf16");
  ASSERT_EQ(expected.size(), 7u) << "scripts/torch_reference.py gave no counts (is torch importable by python3?)";
  CaseRunner runner(Device::cuda(0), quick_settings(), 0);
  for (const std::string variant : kBuiltInVariants) {
    const CaseResult result = runner.run(study_case(variant));
    ASSERT_EQ(result.status, CaseStatus::ok) << variant << ": " << result.error_message;
    ASSERT_TRUE(result.profile.has_value());
    const auto& profile = *result.profile;
    EXPECT_TRUE(profile.counts_consistent) << variant;
    const PythonCounts& python = expected.at(variant);
    ASSERT_EQ(python.status, "ok") << variant;
    EXPECT_EQ(profile.kernels_each_forward.front(), python.kernels) << variant;
    EXPECT_EQ(profile.memcpy_each_forward.front(), python.memcpy) << variant;
    EXPECT_EQ(profile.memset_each_forward.front(), python.memset) << variant;
    EXPECT_GT(result.gpu_time_us->median, 0) << variant;
    ASSERT_TRUE(result.rel_error.has_value()) << variant;
    EXPECT_LT(*result.rel_error, 2e-2) << variant;
    EXPECT_GT(*result.peak_mem_bytes, 0) << variant;
    std::printf("%-15s kernels %d memcpy %d memset %d (python %d/%d/%d) median %.1f us rel_error %.2e backend %s\n",
                variant.c_str(), profile.kernels_each_forward.front(), profile.memcpy_each_forward.front(),
                profile.memset_each_forward.front(), python.kernels, python.memcpy, python.memset,
                result.gpu_time_us->median, *result.rel_error, result.sdpa_backend.c_str());
  }
}

// Issue 36: a value head dim other than the query's (MLA's 192/128). Each variant
// runs where PyTorch in Python runs it and is refused where PyTorch refuses it,
// with the same kernel counts, forward and backward; what runs matches float64
// (the output and dv have the values' head dim). The naive variants and math
// always run it.
TEST(GpuCases, AValueHeadDimOtherThanTheQuerysRunsWherePyTorchRunsIt) {
  SKIP_WITHOUT_CUDA();
  const Shape mla{2, 8, 8, 512, 512, 192, {}, {}, 0, 128};
  ASSERT_EQ(mla.label(), "2x8x512x192/128");
  CaseRunner runner(Device::cuda(0), quick_settings(), 0);
  for (const Pass pass : {Pass::forward, Pass::backward}) {
    const auto expected = python_counts("bf16", to_string(pass), " --shapes 2x8x512x192/128");
    ASSERT_EQ(expected.size(), 7u) << "scripts/torch_reference.py gave no " << to_string(pass) << " counts";
    for (const std::string variant : kBuiltInVariants) {
      SCOPED_TRACE(variant + " " + to_string(pass));
      Case c{0, variant, mla, Dtype::bf16, true};
      c.pass = pass;
      const CaseResult r = runner.run(c);
      const PythonCounts& python = expected.at(variant);
      std::printf("%-15s %-8s %s (python %s) %s\n", variant.c_str(), to_string(pass), to_string(r.status),
                  python.status.c_str(), r.status == CaseStatus::ok ? r.sdpa_backend.c_str() : r.error_message.c_str());
      if (variant == "naive" || variant == "naive_inplace" || variant == "sdpa_math") {
        ASSERT_EQ(r.status, CaseStatus::ok) << r.error_message;
      }
      expect_as_python(r, python, pass, /*errors=*/false);
      if (python.status != "ok" || r.status != CaseStatus::ok) continue;
      // Two matmuls over their own dims: 2 * B * H * (192 + 128) * causal pairs, times 2.5 for a backward.
      const double pairs = 512.0 * 513.0 / 2.0;
      EXPECT_DOUBLE_EQ(r.flops, (pass == Pass::forward ? 1.0 : 2.5) * 2.0 * 2 * 8 * (192 + 128) * pairs);
    }
  }
}

// Issue 36: soft-capping (cap 2: it changes the output far past bf16's bound on
// these inputs). The naive variants run it as PyTorch in Python computes it, with
// its kernel counts (the tanh, its division and multiplication are kernels of
// their own) and errors against the capped float64 attention within 2x of
// Python's own, forward and backward; every SDPA variant is unsupported in both.
TEST(GpuCases, SoftcapRunsOnTheNaiveVariantsAsPythonComputesItAndSdpaRefusesIt) {
  SKIP_WITHOUT_CUDA();
  const Shape shape{2, 8, 8, 512, 512, 128};
  CaseRunner runner(Device::cuda(0), quick_settings(), 0);
  for (const Pass pass : {Pass::forward, Pass::backward}) {
    const std::string more = std::string(pass == Pass::forward ? " --pass forward" : "") +
                             " --shapes 2x8x512x128 --softcap 2";
    const auto expected = python_counts("bf16", to_string(pass), more);
    ASSERT_EQ(expected.size(), 7u) << "scripts/torch_reference.py gave no " << to_string(pass) << " lines";
    for (const std::string variant : kBuiltInVariants) {
      SCOPED_TRACE(variant + " " + to_string(pass));
      Case c{0, variant, shape, Dtype::bf16, true};
      c.pass = pass;
      c.scores.softcap = 2.0;
      const CaseResult r = runner.run(c);
      const PythonCounts& python = expected.at(variant);
      std::printf("%-15s %-8s softcap2 %s (python %s) kernels %d (python %d)\n", variant.c_str(), to_string(pass),
                  to_string(r.status), python.status.c_str(), r.profile ? r.profile->kernels_each_forward.front() : -1,
                  python.kernels);
      const bool sdpa = variant.rfind("sdpa_", 0) == 0;
      EXPECT_EQ(python.status, sdpa ? "unsupported" : "ok");
      if (sdpa) {
        EXPECT_EQ(r.error_message.rfind("soft-capping: scaled_dot_product_attention", 0), 0u) << r.error_message;
      }
      expect_as_python(r, python, pass);
    }
  }
}

// Issue 36: ALiBi and attention sinks, alone and together, forward and backward.
// Every variant runs where PyTorch in Python runs it (ALiBi: naive adds the bias,
// SDPA takes it as a float attn_mask; sinks: naive only) and is refused where
// Python refuses it, with the same kernel counts and errors against the float64
// attention within 2x of Python's own. ALiBi's slopes (1/2 .. 1/256 at 8 heads)
// and N(0, 1) sinks change the output far past bf16's bound at 512 keys.
TEST(GpuCases, AlibiAndSinksRunWherePythonRunsThemWithItsCountsAndErrors) {
  SKIP_WITHOUT_CUDA();
  const Shape shape{2, 8, 8, 512, 512, 128};
  CaseRunner runner(Device::cuda(0), quick_settings(), 0);
  for (const auto& [alibi, sinks] : std::vector<std::pair<bool, bool>>{{true, false}, {false, true}, {true, true}}) {
    for (const Pass pass : {Pass::forward, Pass::backward}) {
      const std::string more = std::string(pass == Pass::forward ? " --pass forward" : "") + " --shapes 2x8x512x128" +
                               (alibi ? " --alibi 1" : "") + (sinks ? " --sinks 1" : "");
      const auto expected = python_counts("bf16", to_string(pass), more);
      ASSERT_EQ(expected.size(), 7u) << "scripts/torch_reference.py gave no lines for" << more;
      for (const std::string variant : kBuiltInVariants) {
        Case c{0, variant, shape, Dtype::bf16, true};
        c.pass = pass;
        c.scores.alibi = alibi;
        c.scores.sinks = sinks;
        SCOPED_TRACE(c.label());
        const CaseResult r = runner.run(c);
        const PythonCounts& python = expected.at(variant);
        std::printf("%-44s %s (python %s) kernels %d (python %d) %s\n", c.label().c_str(), to_string(r.status),
                    python.status.c_str(), r.profile ? r.profile->kernels_each_forward.front() : -1, python.kernels,
                    r.status == CaseStatus::ok ? r.sdpa_backend.c_str() : r.error_message.substr(0, 90).c_str());
        if (variant == "naive" || variant == "naive_inplace" || (variant == "sdpa_math" && !sinks)) {
          ASSERT_EQ(r.status, CaseStatus::ok) << r.error_message;
        }
        if (sinks && variant.rfind("sdpa_", 0) == 0) {
          EXPECT_EQ(r.error_message.rfind("attention sinks: scaled_dot_product_attention's softmax", 0), 0u)
              << r.error_message;
        }
        expect_as_python(r, python, pass);
      }
    }
  }
}

// Issue 36: deterministic algorithms. Each variant's forward and backward with
// torch.use_deterministic_algorithms(True) runs where Python runs it and is
// refused where Python refuses it, with the same kernel counts (fill kernels
// of fresh memory included) and numerics within the bound; the global flag is
// off again after the case.
TEST(GpuCases, DeterministicCasesRunWherePythonRunsThemWithItsCounts) {
  SKIP_WITHOUT_CUDA();
  ASSERT_EQ(setenv("CUBLAS_WORKSPACE_CONFIG", ":4096:8", 0), 0);  // as the sweep sets it (sweep.cpp)
  const Shape shape{2, 8, 8, 512, 512, 128};
  CaseRunner runner(Device::cuda(0), quick_settings(), 0);
  for (const Pass pass : {Pass::forward, Pass::backward}) {
    const std::string more = std::string(pass == Pass::forward ? " --pass forward" : "") +
                             " --shapes 2x8x512x128 --deterministic 1";
    const auto expected = python_counts("bf16", to_string(pass), more);
    ASSERT_EQ(expected.size(), 7u) << "scripts/torch_reference.py gave no lines for" << more;
    for (const std::string variant : kBuiltInVariants) {
      Case c{0, variant, shape, Dtype::bf16, true};
      c.pass = pass;
      c.deterministic = true;
      SCOPED_TRACE(c.label());
      const CaseResult r = runner.run(c);
      EXPECT_FALSE(at::globalContext().deterministicAlgorithms());
      const PythonCounts& python = expected.at(variant);
      std::printf("%-48s %s (python %s) kernels %d (python %d) %s\n", c.label().c_str(), to_string(r.status),
                  python.status.c_str(), r.profile ? r.profile->kernels_each_forward.front() : -1, python.kernels,
                  r.status == CaseStatus::ok ? r.sdpa_backend.c_str() : r.error_message.substr(0, 100).c_str());
      expect_as_python(r, python, pass, /*errors=*/false);
    }
  }
}

// Issue 23: each built-in variant's backward and training step at the study's
// shape. Counts per pass equal torch.profiler's in Python (the backward's
// kernels launched by autograd's device thread), gradients within the bf16
// bound of float64 autograd, the pinned backend's own backward, a CUDA graph of
// the pass replayed or the reason why not, and the memory naive saves for its backward.
TEST(GpuPasses, BackwardCountsMatchTorchProfilerInPythonAndGradientsFloat64) {
  SKIP_WITHOUT_CUDA();
  const std::map<std::string, std::string> backends = {{"sdpa_math", "math"},
                                                       {"sdpa_efficient", "efficient_attention"},
                                                       {"sdpa_flash", "flash_attention"},
                                                       {"sdpa_cudnn", "cudnn_attention"}};
  CaseRunner runner(Device::cuda(0), quick_settings(), 0);
  std::map<std::string, std::int64_t> backward_peak;
  for (const Pass pass : {Pass::backward, Pass::forward_backward}) {
    const auto expected = python_counts("bf16", to_string(pass));
    ASSERT_EQ(expected.size(), 7u) << "scripts/torch_reference.py gave no " << to_string(pass) << " counts";
    for (const std::string variant : kBuiltInVariants) {
      SCOPED_TRACE(variant + " " + to_string(pass));
      Case c = study_case(variant);
      c.pass = pass;
      const CaseResult r = runner.run(c);
      ASSERT_EQ(r.status, CaseStatus::ok) << r.error_message;
      ASSERT_TRUE(r.profile.has_value());
      EXPECT_TRUE(r.profile->counts_consistent);
      const PythonCounts& python = expected.at(variant);
      ASSERT_EQ(python.status, "ok");
      EXPECT_EQ(r.profile->kernels_each_forward.front(), python.kernels);
      EXPECT_EQ(r.profile->memcpy_each_forward.front(), python.memcpy);
      EXPECT_EQ(r.profile->memset_each_forward.front(), python.memset);
      EXPECT_EQ(r.numerics, NumericsVerdict::ok);
      for (const auto& error : {r.grad_rel_error_q, r.grad_rel_error_k, r.grad_rel_error_v}) {
        ASSERT_TRUE(error.has_value());
        EXPECT_GT(*error, 0);
        EXPECT_LT(*error, 1.6e-2);
      }
      if (backends.count(variant)) EXPECT_EQ(r.sdpa_backend_backward, backends.at(variant));
      if (variant == "sdpa_auto") EXPECT_EQ(r.sdpa_backend_backward, r.sdpa_backend);
      // Every built-in variant's backward and training step is captured on the
      // H200; a replay of the pass's kernels takes about as long as the pass.
      ASSERT_TRUE(r.graph_time_us.has_value()) << r.graph_error;
      EXPECT_GT(r.graph_time_us->median, 0.5 * r.gpu_time_us->median);
      EXPECT_LT(r.graph_time_us->median, 2.0 * r.gpu_time_us->median);
      ASSERT_TRUE(r.peak_mem_bytes.has_value());
      if (pass == Pass::backward) backward_peak[variant] = *r.peak_mem_bytes;
      std::printf("%-15s %-16s kernels %d memcpy %d memset %d (python %d/%d/%d) median %.1f us graph %s "
                  "grads %.2e %.2e %.2e backend %s/%s peak %.1f MiB\n",
                  variant.c_str(), to_string(pass), r.profile->kernels_each_forward.front(),
                  r.profile->memcpy_each_forward.front(), r.profile->memset_each_forward.front(), python.kernels,
                  python.memcpy, python.memset, r.gpu_time_us->median,
                  r.graph_time_us ? std::to_string(r.graph_time_us->median).c_str() : r.graph_error.c_str(),
                  *r.grad_rel_error_q, *r.grad_rel_error_k, *r.grad_rel_error_v, r.sdpa_backend.c_str(),
                  r.sdpa_backend_backward.c_str(), *r.peak_mem_bytes / 1048576.0);
    }
  }
  // naive keeps the (8, 16, 1024, 1024) bf16 probabilities (256 MiB) and more for
  // its backward; flash keeps only its output and log-sum-exp. Both peaks hold
  // the inputs and the gradients too (H200: 1369 MiB against 570).
  EXPECT_GT(backward_peak.at("naive"), 2 * backward_peak.at("sdpa_flash"));
}

TEST(GpuCases, FlashAndCudnnRefuseFp32WithPyTorchsReason) {
  SKIP_WITHOUT_CUDA();
  CaseRunner runner(Device::cuda(0), quick_settings(), 0);
  for (const std::string variant : {"sdpa_flash", "sdpa_cudnn"}) {
    const CaseResult result = runner.run(study_case(variant, "fp32"));
    EXPECT_EQ(result.status, CaseStatus::unsupported) << variant;
    EXPECT_NE(result.error_message.find("dtype"), std::string::npos) << variant << ": " << result.error_message;
    EXPECT_FALSE(result.gpu_time_us.has_value());
  }
  // The math backend has no dtype restriction: the same case runs.
  EXPECT_EQ(runner.run(study_case("sdpa_math", "fp32")).status, CaseStatus::ok);
}

TEST(GpuCases, CountsStayIdenticalAcrossManyProfilesInALongLivedProcess) {
  SKIP_WITHOUT_CUDA();
  MeasureSettings settings = quick_settings();
  settings.accuracy_check = false;
  CaseRunner runner(Device::cuda(0), settings, 0);
  std::vector<int> kernels, memsets;
  for (int round = 0; round < 30; ++round) {
    for (const std::string variant : {"naive", "sdpa_cudnn"}) {
      const CaseResult result = runner.run(study_case(variant));
      ASSERT_EQ(result.status, CaseStatus::ok);
      ASSERT_TRUE(result.profile->counts_consistent) << "round " << round << " " << variant;
      if (variant == "naive") kernels.push_back(result.profile->kernels_each_forward.front());
      if (variant == "sdpa_cudnn") memsets.push_back(result.profile->memset_each_forward.front());
    }
  }
  for (std::size_t i = 1; i < kernels.size(); ++i) EXPECT_EQ(kernels[i], kernels[0]) << "round " << i;
  for (std::size_t i = 1; i < memsets.size(); ++i) EXPECT_EQ(memsets[i], memsets[0]) << "round " << i;
  EXPECT_GT(kernels[0], 0);
}

TEST(GpuCases, AKeptFloat64ReferenceIsNotInTheNextCasesPeakMemory) {
  SKIP_WITHOUT_CUDA();
  CaseRunner runner(Device::cuda(0), quick_settings(), 0);
  // The first case computes the float64 reference (64 MiB for this shape) and
  // keeps it; the second reuses it. Were it held by PyTorch's caching allocator,
  // the second case's peak would be 64 MiB higher.
  const CaseResult first = runner.run(study_case("sdpa_flash"));
  const CaseResult second = runner.run(study_case("sdpa_flash"));
  ASSERT_EQ(first.status, CaseStatus::ok) << first.error_message;
  ASSERT_EQ(second.status, CaseStatus::ok) << second.error_message;
  ASSERT_TRUE(first.peak_mem_bytes && second.peak_mem_bytes);
  EXPECT_LT(std::llabs(*second.peak_mem_bytes - *first.peak_mem_bytes), 1 << 20)
      << *first.peak_mem_bytes << " then " << *second.peak_mem_bytes;
  ASSERT_TRUE(first.rel_error && second.rel_error);
  EXPECT_EQ(*first.rel_error, *second.rel_error);
}

TEST(GpuCases, AutoRecordsTheBackendPyTorchChose) {
  SKIP_WITHOUT_CUDA();
  CaseRunner runner(Device::cuda(0), quick_settings(), 0);
  const CaseResult result = runner.run(study_case("sdpa_auto"));
  ASSERT_EQ(result.status, CaseStatus::ok);
  EXPECT_TRUE(result.sdpa_backend == "cudnn_attention" || result.sdpa_backend == "flash_attention" ||
              result.sdpa_backend == "efficient_attention" || result.sdpa_backend == "math")
      << result.sdpa_backend;
}

}  // namespace
}  // namespace attnsweep

namespace attnsweep {
namespace {

TEST(GpuFaults, OutOfMemoryIsAStatusWithTheSizeAndTheNextCaseStillRuns) {
  SKIP_WITHOUT_CUDA();
  CaseRunner runner(Device::cuda(0), quick_settings(), 0);
  // Inputs of 0.27 GB each, but the naive score matrix would need 16 x 131072^2 x 2 bytes = 550 GB.
  const CaseResult oom = runner.run(Case{0, "naive", Shape{1, 16, 16, 131072, 131072, 64}, Dtype::bf16, true});
  EXPECT_EQ(oom.status, CaseStatus::oom) << oom.error_message;
  EXPECT_NE(oom.error_message.find("Tried to allocate"), std::string::npos) << oom.error_message;
  EXPECT_FALSE(oom.gpu_time_us.has_value());
  const CaseResult next = runner.run(study_case("sdpa_flash"));
  EXPECT_EQ(next.status, CaseStatus::ok) << next.error_message;
}

}  // namespace
}  // namespace attnsweep

namespace attnsweep {
namespace {

// Timing protocol v2 on the GPU: clocks, blocked samples, graph replays and
// launch metadata are recorded; the values are printed for the closing note.
TEST(GpuProtocol, ClocksBlockingGraphReplaysAndLaunchMetadataAreRecorded) {
  SKIP_WITHOUT_CUDA();
  CaseRunner runner(Device::cuda(0), quick_settings(), 0);
  for (const std::string variant : {"naive", "sdpa_flash", "sdpa_cudnn"}) {
    const CaseResult r = runner.run(study_case(variant));
    ASSERT_EQ(r.status, CaseStatus::ok) << r.error_message;
    EXPECT_EQ(r.launch_latency_hidden, std::optional<bool>(true)) << variant;
    ASSERT_TRUE(r.graph_time_us.has_value()) << variant << ": " << r.graph_error;
    EXPECT_GT(r.graph_time_us->median, 0);
    ASSERT_TRUE(r.sm_clock_mhz_mean.has_value()) << "NVML gave no SM clock";
    EXPECT_GT(*r.sm_clock_mhz_mean, 0);
    int eager = 0, graph = 0;
    for (const auto& s : r.samples) {
      eager += s.mode == SampleMode::eager;
      graph += s.mode == SampleMode::graph;
      EXPECT_TRUE(s.blocked);
      EXPECT_FALSE(s.block_timed_out);
    }
    EXPECT_GE(eager, 5);
    EXPECT_GE(graph, 5);
    const KernelStat* main_kernel = nullptr;
    for (const auto& k : r.profile->kernels) {
      if (k.kind == "kernel" && (!main_kernel || k.total_us > main_kernel->total_us)) main_kernel = &k;
    }
    ASSERT_NE(main_kernel, nullptr);
    EXPECT_FALSE(main_kernel->grid.empty()) << main_kernel->name;
    EXPECT_FALSE(main_kernel->block.empty()) << main_kernel->name;
    std::printf("%-11s eager %.1f us, graph %.1f us, host dispatch %.1f us, SM clock %.0f MHz, throttled %d; "
                "%s grid %s block %s regs %d smem %lld occupancy %.1f%%\n",
                variant.c_str(), r.gpu_time_us->median, r.graph_time_us->median, *r.cpu_dispatch_us_median,
                *r.sm_clock_mhz_mean, r.throttled_samples, main_kernel->name.substr(0, 40).c_str(),
                main_kernel->grid.c_str(), main_kernel->block.c_str(), main_kernel->registers_per_thread.value_or(-1),
                static_cast<long long>(main_kernel->shared_memory_bytes.value_or(-1)),
                main_kernel->est_occupancy_pct.value_or(-1));
  }
}

// Schema 7 on the GPU: every sample carries NVML's clock event reasons, the case
// its cap shares; the burst regime cools down before samples (the H200 case of
// ../shared/DEVICE.md is the one that reaches the power cap; here the study's
// shape, which does not, so the cool-downs are short and the shares 0).
TEST(GpuProtocol, ClockReasonsPerSampleAndTheBurstRegimesCoolDown) {
  SKIP_WITHOUT_CUDA();
  for (const MeasureRegime regime : {MeasureRegime::sustained, MeasureRegime::burst}) {
    MeasureSettings settings = quick_settings();
    settings.regime = regime;
    settings.cuda_graph = false;
    CaseRunner runner(Device::cuda(0), settings, 0);
    const CaseResult r = runner.run(study_case("sdpa_cudnn"));
    ASSERT_EQ(r.status, CaseStatus::ok) << r.error_message;
    for (const auto& s : r.samples) ASSERT_TRUE(s.clock_event_reasons.has_value()) << "NVML gave no reasons";
    ASSERT_TRUE(r.power_cap_share.has_value());
    ASSERT_TRUE(r.thermal_cap_share.has_value());
    EXPECT_GE(*r.power_cap_share, 0);
    EXPECT_LE(*r.power_cap_share, 1);
    if (regime == MeasureRegime::sustained) {
      EXPECT_EQ(r.cooldown_seconds, 0);
    } else {
      // Bounded: at most burst_cooldown_max_ms per sample.
      EXPECT_LE(r.cooldown_seconds, r.samples.size() * settings.burst_cooldown_max_ms / 1000.0 + 0.05);
    }
    std::printf("%-9s median %.1f us, %zu samples, power-capped %.2f, thermal %.2f, cool-down %.3f s, reasons of "
                "the first sample 0x%llx\n",
                to_string(regime), r.gpu_time_us->median, r.samples.size(), *r.power_cap_share,
                *r.thermal_cap_share, r.cooldown_seconds,
                static_cast<unsigned long long>(r.samples.front().clock_event_reasons.value_or(0)));
  }
}

// Issue 24: the energy window with measure.energy_window_ms 300, in both
// regimes. Joules per pass from NVML's counter, a power a GPU can draw, the
// window at least as long as asked and mostly busy with the passes; a training
// step costs more than its forward; a backward has none; without the window, none.
TEST(GpuEnergy, TheEnergyWindowGivesJoulesPerPassAndThePowerOfNvmlsCounter) {
  SKIP_WITHOUT_CUDA();
  if (!nvml::Device::of_cuda_device(0).total_energy_mj()) {
    GTEST_SKIP() << "NVML has no energy counter on this GPU (nvmlDeviceGetTotalEnergyConsumption)";
  }
  for (const MeasureRegime regime : {MeasureRegime::sustained, MeasureRegime::burst}) {
    SCOPED_TRACE(to_string(regime));
    MeasureSettings settings = quick_settings();
    settings.regime = regime;
    settings.cuda_graph = false;
    settings.energy_window_ms = 300;
    CaseRunner runner(Device::cuda(0), settings, 0);
    std::map<Pass, CaseResult> results;
    for (const Pass pass : {Pass::forward, Pass::backward, Pass::forward_backward}) {
      Case c = study_case("sdpa_flash");
      c.pass = pass;
      results[pass] = runner.run(c);
      ASSERT_EQ(results[pass].status, CaseStatus::ok) << results[pass].error_message;
    }
    for (const Pass pass : {Pass::forward, Pass::forward_backward}) {
      const CaseResult& r = results[pass];
      SCOPED_TRACE(to_string(pass));
      std::string warnings;
      for (const auto& warning : r.warnings) warnings += warning + "; ";
      ASSERT_TRUE(r.energy_j && r.energy_power_w && r.energy_window_s && r.energy_passes) << warnings;
      EXPECT_GT(*r.energy_j, 0);
      EXPECT_GT(*r.energy_power_w, 50);
      EXPECT_LT(*r.energy_power_w, 1000);
      EXPECT_GE(*r.energy_passes, 1);
      EXPECT_GE(*r.energy_window_s, 0.3);
      EXPECT_NEAR(*r.energy_j * *r.energy_passes / *r.energy_window_s, *r.energy_power_w, 1e-6 * *r.energy_power_w);
      // The GPU spent most of the window on the passes: passes x the sampled median against the window
      // (the samples flush the L2 and the window does not, so it may pass 1; the tail idles until the step).
      const double busy = *r.energy_passes * r.gpu_time_us->median * 1e-6 / *r.energy_window_s;
      EXPECT_GT(busy, 0.4);
      EXPECT_LT(busy, 1.5);
      std::printf("%-9s %-16s %.1f us median, energy %.4f J per pass, %.0f W, %d passes in %.3f s (busy %.2f), "
                  "%.3f TFLOP/J, cool-down %.3f s\n",
                  to_string(regime), to_string(pass), r.gpu_time_us->median, *r.energy_j, *r.energy_power_w,
                  *r.energy_passes, *r.energy_window_s, busy, r.flops / 1e12 / *r.energy_j, r.cooldown_seconds);
    }
    EXPECT_GT(*results[Pass::forward_backward].energy_j, 1.5 * *results[Pass::forward].energy_j);
    const CaseResult& backward = results[Pass::backward];
    EXPECT_FALSE(backward.energy_j || backward.energy_power_w || backward.energy_window_s || backward.energy_passes);
    for (const auto& warning : backward.warnings) EXPECT_EQ(warning.find("energy"), std::string::npos) << warning;
  }
  CaseRunner without(Device::cuda(0), quick_settings(), 0);
  const CaseResult off = without.run(study_case("sdpa_flash"));
  ASSERT_EQ(off.status, CaseStatus::ok) << off.error_message;
  EXPECT_FALSE(off.energy_j || off.energy_power_w || off.energy_window_s || off.energy_passes);
}

}  // namespace
}  // namespace attnsweep
