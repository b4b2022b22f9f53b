// Why a case changed, kernel by kernel (runner/compare/kernel_differences.hpp,
// docs/compare.md "Kernel differences"): short names of real kernel names,
// the differences of planted kernel rows, and comparisons of real H200
// databases in which "a different backend was pinned".
//
// The real databases are excerpts of the H200 runs of issue 23
// (proofs/training/h200-training.md), made with sqlite3 from the run's bench.db
// and training.db (cases deleted, then VACUUM; every value left as measured):
//   tests/data/h200_bench_excerpt.db     bench.db, cases 3-6 and 41-42: sdpa_math,
//                                        _efficient, _flash, _cudnn 8x16x1024x64 bf16,
//                                        sdpa_flash, _cudnn 4x32x2048x128 bf16, forward
//   tests/data/h200_training_excerpt.db  training.db, cases 14, 15, 17, 18: sdpa_flash
//                                        and sdpa_cudnn 8x16x1024x64 bf16, backward and
//                                        forward_backward
// Each test copies one and, in the copy, gives sdpa_cudnn's case sdpa_flash's
// real kernel rows and samples (pin_flash below): what the candidate of a run
// with the flash backend pinned in place of cuDNN would hold.
#include <gtest/gtest.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/compare/compare_runs.hpp"
#include "runner/compare/comparison_report.hpp"
#include "runner/compare/kernel_differences.hpp"
#include "runner/storage/run_reader.hpp"
#include "runner/storage/store.hpp"
#include "tests/support/scratch_directory.hpp"

namespace attnsweep::compare {
namespace {

namespace fs = std::filesystem;

// ---- real kernel names (the H200 databases) ----------------------------------------

const std::string kFlashForward =
    "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, cutlass::bfloat16_t, "
    "Flash_kernel_traits<64, 128, 128, 4, cutlass::bfloat16_t> >, false, true, false, false, true, true, false, "
    "false>(pytorch_flash::Flash_fwd_params)";
const std::string kFlashForwardShort = "flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4, false, ...>, ...>";
const std::string kCudnnForward =
    "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x64_4x1x1_cga1x1x1_kernel0_0";
const std::string kCudnnBackward =
    "cudnn_generated_fort_native_sdpa_sm90_flash_bprop_wgmma_f16_knob_26_64x64x64_1x4x1_cga1x1x1_kernel0_0";
const std::string kFlashBackwardMain =
    "void pytorch_flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<64, 128, 128, 8, 4, 4, "
    "4, false, false, cutlass::bfloat16_t, Flash_kernel_traits<64, 128, 128, 8, cutlass::bfloat16_t> >, false, true, "
    "false, false, true, true, false>(pytorch_flash::Flash_bwd_params)";

// The masked_fill kernel of the naive variant for fp16 and bf16: the same but
// for the lambda's number and the element type.
std::string masked_fill(const std::string& lambda, const std::string& type) {
  const std::string inner = "at::native::(anonymous namespace)::masked_fill_kernel(at::TensorIterator&, c10::Scalar "
                            "const&)::{lambda()#1}::operator()() const::{lambda()#" +
                            lambda + "}::operator()() const::{lambda(c10::" + type + ", bool)#1}";
  const std::string functor = "at::native::gpu_kernel_impl_nocast<" + inner + ">(at::TensorIteratorBase&, " + inner +
                              " const&)::{lambda(int)#1}";
  return "void at::native::elementwise_kernel<128, 4, " + functor + ">(int, " + functor + ")";
}

TEST(ShortKernelName, CutsTemplateArgumentsAfterTheFirstThatFit) {
  EXPECT_EQ(short_kernel_name(kFlashForward), kFlashForwardShort);
  EXPECT_LE(short_kernel_name(kFlashForward).size(), 80u);
  // A wider budget keeps more of the same prefix; the whole stripped name when it fits.
  EXPECT_EQ(short_kernel_name(kFlashForward, 100),
            "flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, bfloat16_t, ...>, ...>");
  EXPECT_EQ(short_kernel_name(kFlashForward, 1000),
            "flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, bfloat16_t, "
            "Flash_kernel_traits<64, 128, 128, 4, bfloat16_t>>, false, true, false, false, true, true, false, false>");
  // A long name leaves little room: the first template argument's own arguments go.
  EXPECT_EQ(short_kernel_name(kFlashBackwardMain),
            "flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<...>, ...>");
  EXPECT_EQ(short_kernel_name(kFlashBackwardMain, 90),
            "flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<64, 128, ...>, ...>");
}

TEST(ShortKernelName, DropsReturnTypeParametersNamespacesAndLambdas) {
  EXPECT_EQ(short_kernel_name("void (anonymous namespace)::softmax_warp_forward<c10::BFloat16, c10::BFloat16, float, "
                              "10, false, false>(c10::BFloat16*, c10::BFloat16 const*, int, int, int, bool const*, "
                              "int, bool)"),
            "softmax_warp_forward<BFloat16, BFloat16, float, 10, false, false>");
  EXPECT_EQ(short_kernel_name("fmha_cutlassF_bf16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<"
                              "cutlass::bfloat16_t, cutlass::arch::Sm80, true, 64, 64, 64, true, true>::Params)"),
            "fmha_cutlassF_bf16_aligned_64x64_rf_sm80");
  EXPECT_EQ(short_kernel_name("void cudnn::fusion::convert_dq_to_16bits<true>(void const*, void*, unsigned int, "
                              "float const*, bool, bool)"),
            "convert_dq_to_16bits<true>");
  // "const" goes as a word only.
  EXPECT_EQ(short_kernel_name("void ns::fill<ns::constant_t, float const*>(int)"), "fill<constant_t, float*>");
  // The lambdas and the functor's parameters go; what the functor is stays.
  EXPECT_EQ(short_kernel_name(masked_fill("12", "BFloat16")),
            "elementwise_kernel<128, 4, gpu_kernel_impl_nocast<masked_fill_kernel(...)>>");
}

TEST(ShortKernelName, LeavesNamesWithoutStructureWhole) {
  EXPECT_EQ(short_kernel_name(kCudnnForward), kCudnnForward);  // 101 characters: every one of them tells
  EXPECT_EQ(short_kernel_name("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT"),
            "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT");
  EXPECT_EQ(short_kernel_name("Memset (Device)"), "Memset (Device)");
  EXPECT_EQ(short_kernel_name("Memcpy DtoD (Device -> Device)"), "Memcpy DtoD (Device -> Device)");
}

TEST(ShortKernelName, TwoNamesThatWouldLookAlikeStayApart) {
  // fp16 and bf16 flash kernels: the 80-character forms differ only after the cut.
  const std::string half = [] {
    std::string name = kFlashForward;
    for (std::size_t at = name.find("bfloat16_t"); at != std::string::npos; at = name.find("bfloat16_t", at)) {
      name.replace(at, 10, "half_t");
    }
    return name;
  }();
  ASSERT_EQ(short_kernel_name(half), kFlashForwardShort);
  const std::vector<std::string> flash = short_kernel_names({kFlashForward, half});
  EXPECT_NE(flash[0], flash[1]);
  EXPECT_NE(flash[0].find("bfloat16_t"), std::string::npos) << flash[0];
  EXPECT_NE(flash[1].find("half_t"), std::string::npos) << flash[1];
  // Two masked_fill kernels that differ only inside their lambdas: a hash tells them apart.
  const std::vector<std::string> fills = short_kernel_names({masked_fill("11", "Half"), masked_fill("12", "BFloat16")});
  EXPECT_NE(fills[0], fills[1]);
  for (const std::string& fill : fills) {
    EXPECT_EQ(fill.rfind("elementwise_kernel<128, 4, gpu_kernel_impl_nocast<masked_fill_kernel(...)>> #", 0), 0u)
        << fill;
  }
  // A name alone in its list keeps its short form.
  EXPECT_EQ(short_kernel_names({kFlashForward, kCudnnForward}),
            (std::vector<std::string>{kFlashForwardShort, kCudnnForward}));
}

// ---- differences of planted rows --------------------------------------------------

KernelStat kernel(const std::string& name, double time_us, const std::string& grid = "[8, 8, 16]",
                  int registers = 128, double launches = 1) {
  KernelStat k;
  k.name = name;
  k.kind = "kernel";
  k.launches_per_forward = launches;
  k.total_us = time_us;
  k.mean_us = k.min_us = k.max_us = time_us / launches;
  k.stream = 7;
  k.grid = grid;
  k.block = "[128, 1, 1]";
  k.registers_per_thread = registers;
  k.shared_memory_bytes = 49152;
  k.est_occupancy_pct = 13;
  return k;
}

KernelStat memset_row(double time_us) {
  KernelStat k;
  k.name = "Memset (Device)";
  k.kind = "memset";
  k.launches_per_forward = 1;
  k.total_us = k.mean_us = k.min_us = k.max_us = time_us;
  return k;
}

std::vector<std::string> names_of(const KernelDifferences& differences) {
  std::vector<std::string> names;
  for (const KernelDifference& d : differences.kernels) names.push_back(d.name);
  return names;
}

TEST(KernelDifferencesOfRows, AddedRemovedAndChangedKernelsWithWhatChanged) {
  const std::vector<KernelStat> baseline = {kernel("a", 50), memset_row(1), kernel("c", 49)};
  const std::vector<KernelStat> candidate = {kernel("a", 50, "[16, 8, 16]", 168), kernel("c", 49), kernel("d", 10)};
  const KernelDifferences d = kernel_differences(baseline, candidate);
  EXPECT_EQ(d.added, 1);
  EXPECT_EQ(d.removed, 1);
  EXPECT_EQ(d.changed, 1);
  EXPECT_EQ(d.unchanged, 1);  // c: its share moved 49% -> 45%, under 5 points
  EXPECT_FALSE(d.top_by_time);
  EXPECT_TRUE(d.missing.empty());
  EXPECT_DOUBLE_EQ(d.baseline_time_us, 100);
  EXPECT_DOUBLE_EQ(d.candidate_time_us, 109);
  // The largest share on either side first.
  ASSERT_EQ(names_of(d), (std::vector<std::string>{"a", "d", "Memset (Device)"}));
  const KernelDifference& a = d.kernels[0];
  EXPECT_EQ(a.change, KernelChange::changed);
  EXPECT_EQ(a.aspects, (std::vector<KernelAspect>{KernelAspect::grid, KernelAspect::registers}));
  EXPECT_EQ(a.baseline->grid, "[8,8,16]");  // blanks dropped: stored text differs by format, not value
  EXPECT_EQ(a.candidate->grid, "[16,8,16]");
  EXPECT_EQ(a.candidate->registers_per_thread, 168);
  EXPECT_DOUBLE_EQ(a.baseline->time_share, 0.5);
  EXPECT_NEAR(a.candidate->time_share, 50.0 / 109, 1e-12);
  EXPECT_EQ(d.kernels[1].change, KernelChange::added);
  EXPECT_FALSE(d.kernels[1].baseline);
  EXPECT_EQ(d.kernels[2].change, KernelChange::removed);
  EXPECT_EQ(d.kernels[2].kind, "memset");
  EXPECT_FALSE(d.kernels[2].candidate);
}

TEST(KernelDifferencesOfRows, LaunchesAndTimeShareCountAsChanges) {
  const KernelDifferences d = kernel_differences({kernel("gemm", 60), kernel("softmax", 40, "[8, 8, 16]", 128, 1)},
                                                 {kernel("gemm", 120), kernel("softmax", 80, "[8, 8, 16]", 128, 2)});
  // gemm's share stays 60%; softmax launches twice now.
  ASSERT_EQ(names_of(d), (std::vector<std::string>{"softmax"}));
  EXPECT_EQ(d.kernels[0].aspects, (std::vector<KernelAspect>{KernelAspect::launches}));
  EXPECT_EQ(d.unchanged, 1);
  const KernelDifferences shares = kernel_differences({kernel("gemm", 60), kernel("softmax", 40)},
                                                      {kernel("gemm", 60), kernel("softmax", 80)});
  // softmax 40% -> 57%, gemm 60% -> 43%: both beyond 5 points.
  ASSERT_EQ(names_of(shares), (std::vector<std::string>{"gemm", "softmax"}));
  for (const KernelDifference& k : shares.kernels) {
    EXPECT_EQ(k.aspects, (std::vector<KernelAspect>{KernelAspect::time_share})) << k.name;
  }
}

TEST(KernelDifferencesOfRows, OnlyTimeChangedListsTheTopKernelsByShare) {
  const std::vector<KernelStat> baseline = {kernel("k1", 10), kernel("k2", 40), kernel("k3", 30), kernel("k4", 20)};
  std::vector<KernelStat> candidate = baseline;
  for (KernelStat& k : candidate) k.total_us *= 2;
  const KernelDifferences d = kernel_differences(baseline, candidate);
  EXPECT_TRUE(d.top_by_time);
  EXPECT_EQ(d.unchanged, 4);
  EXPECT_EQ(d.changed + d.added + d.removed, 0);
  ASSERT_EQ(names_of(d), (std::vector<std::string>{"k2", "k3", "k4"}));  // top 3 by share
  EXPECT_EQ(d.kernels[0].change, KernelChange::unchanged);
  EXPECT_DOUBLE_EQ(d.kernels[0].baseline->time_us, 40);
  EXPECT_DOUBLE_EQ(d.kernels[0].candidate->time_us, 80);
  KernelDifferenceSettings one;
  one.top_by_time = 1;
  EXPECT_EQ(names_of(kernel_differences(baseline, candidate, one)), (std::vector<std::string>{"k2"}));
}

TEST(KernelDifferencesOfRows, ASideWithoutRowsListsNothing) {
  const KernelDifferences d = kernel_differences({}, {kernel("a", 1), kernel("b", 2)});
  EXPECT_TRUE(d.kernels.empty());
  EXPECT_EQ(d.missing, "no kernel recorded in the baseline");
  EXPECT_EQ(d.added, 0);
  EXPECT_EQ(kernel_differences({kernel("a", 1)}, {}).missing, "no kernel recorded in the candidate");
  EXPECT_TRUE(kernel_differences({}, {}).missing.empty());
}

// ---- real H200 databases, a different backend pinned --------------------------------

std::string source_data(const std::string& name) { return std::string(ATTNSWEEP_SOURCE_DIR) + "/tests/data/" + name; }

// Every line of `text` holding all of `parts`.
std::vector<std::string> lines_with(const std::string& text, const std::vector<std::string>& parts) {
  std::vector<std::string> found;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (std::all_of(parts.begin(), parts.end(), [&](const std::string& p) { return line.find(p) != std::string::npos; })) {
      found.push_back(line);
    }
  }
  return found;
}

class RealKernelDifferences : public ::testing::Test {
 protected:
  // A copy of a saved excerpt, brought to this attnsweep's schema (the Store
  // migrates a file of an older version when it opens it) so that a RunReader reads it.
  std::string copy(const std::string& data, const std::string& name) {
    const std::string path = scratch_.path(name);
    fs::copy_file(source_data(data), path);
    fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write);
    { const storage::Store migrated(path); }  // saved with schema 10; the reader reads the newest
    return path;
  }

  // The case `to` of the copy gets the kernel rows and samples that case `from`
  // measured (another variant's), its backend and launch counts: as if the
  // flash backend had been pinned where cuDNN ran.
  static void pin_flash(const std::string& path, int from, int to) {
    const std::string f = std::to_string(from), t = std::to_string(to);
    SQLite::Database db(path, SQLite::OPEN_READWRITE);
    db.exec("DELETE FROM kernels WHERE case_id = " + t +
            "; CREATE TEMP TABLE moved_kernels AS SELECT * FROM kernels WHERE case_id = " + f +
            "; UPDATE moved_kernels SET case_id = " + t +
            "; INSERT INTO kernels SELECT * FROM moved_kernels"
            "; DELETE FROM samples WHERE case_id = " + t +
            "; CREATE TEMP TABLE moved_samples AS SELECT * FROM samples WHERE case_id = " + f +
            "; UPDATE moved_samples SET case_id = " + t +
            "; INSERT INTO samples SELECT * FROM moved_samples"
            "; UPDATE cases SET (sdpa_backend, sdpa_backend_backward, kernels_per_forward, memcpy_per_forward,"
            " memset_per_forward, kernel_time_us_per_forward) = (SELECT sdpa_backend, sdpa_backend_backward,"
            " kernels_per_forward, memcpy_per_forward, memset_per_forward, kernel_time_us_per_forward"
            " FROM cases WHERE case_id = " + f + ") WHERE case_id = " + t);
  }

  static Comparison compare(const std::string& baseline, const std::string& candidate) {
    const storage::RunReader base(baseline), cand(candidate);
    return compare_runs(base, 1, cand, 1);
  }

  static const CaseComparison& case_labelled(const Comparison& comparison, const std::string& label) {
    for (const CaseComparison& c : comparison.cases) {
      if (c.key.label() == label) return c;
    }
    throw std::runtime_error("no compared case " + label);
  }

  attnsweep::testing::ScratchDirectory scratch_{"attnsweep-kernel-differences"};
};

TEST_F(RealKernelDifferences, AnUnchangedCopyHasNone) {
  const std::string baseline = copy("h200_bench_excerpt.db", "baseline.db");
  const Comparison comparison = compare(baseline, copy("h200_bench_excerpt.db", "same.db"));
  ASSERT_EQ(comparison.cases.size(), 6u);
  for (const CaseComparison& c : comparison.cases) EXPECT_FALSE(c.kernels) << c.key.label();
  EXPECT_EQ(comparison.kernel_difference_cases(), 0);
  EXPECT_EQ(render(comparison, Format::text).find("Kernel differences"), std::string::npos);
  EXPECT_TRUE(nlohmann::json::parse(render(comparison, Format::json))["cases"][0]["kernel_differences"].is_null());
}

TEST_F(RealKernelDifferences, FlashPinnedInPlaceOfCudnnForward) {
  const std::string baseline = copy("h200_bench_excerpt.db", "baseline.db");
  const std::string candidate = copy("h200_bench_excerpt.db", "flash-pinned.db");
  pin_flash(candidate, 5, 6);  // sdpa_flash's rows under sdpa_cudnn 8x16x1024x64 bf16
  const Comparison comparison = compare(baseline, candidate);
  const std::string label = "sdpa_cudnn 8x16x1024x64 bf16 causal cuda";

  // The findings that call for an explanation, and only that case has one.
  EXPECT_EQ(comparison.regressions(), 3);  // memset_per_forward 1 -> 0, the backend, SLOWER
  EXPECT_EQ(comparison.kernel_difference_cases(), 1);
  for (const CaseComparison& c : comparison.cases) EXPECT_EQ(c.kernels.has_value(), c.key.label() == label);
  const CaseComparison& cudnn = case_labelled(comparison, label);
  ASSERT_TRUE(cudnn.kernels);
  const KernelDifferences& d = *cudnn.kernels;
  EXPECT_EQ(d.added, 1);
  EXPECT_EQ(d.removed, 2);
  EXPECT_EQ(d.changed + d.unchanged, 0);
  EXPECT_NEAR(d.baseline_time_us, 57.30, 0.01);  // the case's kernel_time_us_per_forward
  EXPECT_NEAR(d.candidate_time_us, 93.81, 0.01);
  ASSERT_EQ(names_of(d), (std::vector<std::string>{kFlashForward, kCudnnForward, "Memset (Device)"}));
  const KernelDifference& flash = d.kernels[0];
  EXPECT_EQ(flash.change, KernelChange::added);
  EXPECT_EQ(flash.short_name, kFlashForwardShort);
  EXPECT_EQ(flash.candidate->grid, "[8,8,16]");
  EXPECT_EQ(flash.candidate->block, "[128,1,1]");
  EXPECT_EQ(flash.candidate->registers_per_thread, 255);
  EXPECT_EQ(flash.candidate->shared_memory_bytes, 49152);
  EXPECT_EQ(flash.candidate->est_occupancy_pct, 13.0);
  EXPECT_DOUBLE_EQ(flash.candidate->time_share, 1.0);
  const KernelDifference& cudnn_kernel = d.kernels[1];
  EXPECT_EQ(cudnn_kernel.change, KernelChange::removed);
  EXPECT_EQ(cudnn_kernel.baseline->grid, "[132,1,1]");
  EXPECT_EQ(cudnn_kernel.baseline->block, "[384,1,1]");
  EXPECT_EQ(cudnn_kernel.baseline->registers_per_thread, 168);
  EXPECT_EQ(cudnn_kernel.baseline->shared_memory_bytes, 134144);
  EXPECT_NEAR(cudnn_kernel.baseline->time_share, 0.9864, 1e-4);

  // Text: a line for the case, a row per kernel with its values.
  const std::string text = render(comparison, Format::text);
  EXPECT_NE(text.find("\nKernel differences (1 case; per pass, baseline -> candidate;"), std::string::npos) << text;
  EXPECT_EQ(lines_with(text, {label + ": 3 kernels (2 removed, 1 added, 0 unchanged); kernel time 57.3 -> 93.8 us "
                                      "per pass"})
                .size(),
            1u)
      << text;
  EXPECT_EQ(lines_with(text, {"  added ", kFlashForwardShort, " 0 -> 1 ", " 93.8 ", " 100.0% ", " [8,8,16] ",
                              " [128,1,1] ", " 255 ", " 48.0 ", " 13%"})
                .size(),
            1u)
      << text;
  EXPECT_EQ(lines_with(text, {"  removed ", kCudnnForward, " 1 -> 0 ", " 56.5 ", " 98.6% ", " [132,1,1] ",
                              " [384,1,1] ", " 168 ", " 131.0 ", " 0%"})
                .size(),
            1u)
      << text;
  EXPECT_EQ(lines_with(text, {"  removed ", "Memset (Device) ", " 1 -> 0 ", " 0.8 ", " 1.4% "}).size(), 1u) << text;
  EXPECT_EQ(text.find(kFlashForward), std::string::npos) << "the full name belongs in the JSON";
  // After the findings, before the counts.
  EXPECT_LT(text.find("Findings:"), text.find("Kernel differences"));
  EXPECT_LT(text.find("Kernel differences"), text.find("Time verdicts:"));

  // Markdown: the same rows as a table, '<' escaped.
  const std::string markdown = render(comparison, Format::markdown);
  EXPECT_NE(markdown.find("**Kernel differences** (1 case; per pass"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("- " + label + ": 3 kernels (2 removed, 1 added, 0 unchanged); kernel time 57.3 -> 93.8 us "
                                         "per pass\n"),
            std::string::npos)
      << markdown;
  EXPECT_NE(markdown.find("| change | kernel | launches | time us | share | grid | block | registers | shared KiB | "
                          "occupancy |"),
            std::string::npos)
      << markdown;
  EXPECT_NE(markdown.find("| added | flash_fwd_kernel\\<Flash_fwd_kernel_traits\\<64, 128, 128, 4, false, ...>, ...> "
                          "| 0 -> 1 | 93.8 | 100.0% | [8,8,16] | [128,1,1] | 255 | 48.0 | 13% |"),
            std::string::npos)
      << markdown;
  EXPECT_NE(markdown.find("| removed | " + kCudnnForward +
                          " | 1 -> 0 | 56.5 | 98.6% | [132,1,1] | [384,1,1] | 168 | 131.0 | 0% |"),
            std::string::npos)
      << markdown;
  EXPECT_NE(markdown.find("| removed | Memset (Device) | 1 -> 0 | 0.8 | 1.4% | - | - | - | - | - |"), std::string::npos)
      << markdown;

  // JSON: the full names, every value.
  const nlohmann::json json = nlohmann::json::parse(render(comparison, Format::json));
  EXPECT_EQ(json["summary"]["kernel_differences"], 1);
  EXPECT_EQ(json["settings"]["kernels"]["share_change"], 0.05);
  EXPECT_EQ(json["settings"]["kernels"]["top_by_time"], 3);
  for (const auto& c : json["cases"]) {
    if (c["key"]["label"] != label) EXPECT_TRUE(c["kernel_differences"].is_null()) << c["key"]["label"];
  }
  const auto found = std::find_if(json["cases"].begin(), json["cases"].end(),
                                  [&](const nlohmann::json& c) { return c["key"]["label"] == label; });
  ASSERT_NE(found, json["cases"].end());
  const nlohmann::json& k = (*found)["kernel_differences"];
  EXPECT_EQ(k["added"], 1);
  EXPECT_EQ(k["removed"], 2);
  EXPECT_EQ(k["changed"], 0);
  EXPECT_EQ(k["unchanged"], 0);
  EXPECT_EQ(k["top_by_time"], false);
  EXPECT_EQ(k["baseline_rows"], 2);
  EXPECT_EQ(k["candidate_rows"], 1);
  ASSERT_EQ(k["kernels"].size(), 3u);
  const nlohmann::json& added = k["kernels"][0];
  EXPECT_EQ(added["name"], kFlashForward);
  EXPECT_EQ(added["short_name"], kFlashForwardShort);
  EXPECT_EQ(added["kind"], "kernel");
  EXPECT_EQ(added["change"], "added");
  EXPECT_TRUE(added["baseline"].is_null());
  EXPECT_EQ(added["candidate"]["launches_per_pass"], 1.0);
  EXPECT_EQ(added["candidate"]["grid"], "[8,8,16]");
  EXPECT_EQ(added["candidate"]["block"], "[128,1,1]");
  EXPECT_EQ(added["candidate"]["registers_per_thread"], 255);
  EXPECT_EQ(added["candidate"]["shared_memory_bytes"], 49152);
  EXPECT_EQ(added["candidate"]["est_occupancy_pct"], 13.0);
  EXPECT_EQ(added["candidate"]["time_share"], 1.0);
  const nlohmann::json& removed = k["kernels"][1];
  EXPECT_EQ(removed["name"], kCudnnForward);
  EXPECT_EQ(removed["change"], "removed");
  EXPECT_TRUE(removed["candidate"].is_null());
  EXPECT_EQ(removed["baseline"]["registers_per_thread"], 168);
  EXPECT_EQ(removed["baseline"]["shared_memory_bytes"], 134144);
  const nlohmann::json& memset = k["kernels"][2];
  EXPECT_EQ(memset["kind"], "memset");
  EXPECT_TRUE(memset["baseline"]["grid"].is_null());
  EXPECT_TRUE(memset["baseline"]["registers_per_thread"].is_null());
}

TEST_F(RealKernelDifferences, FlashPinnedInPlaceOfCudnnBackward) {
  const std::string baseline = copy("h200_training_excerpt.db", "baseline.db");
  const std::string candidate = copy("h200_training_excerpt.db", "flash-pinned.db");
  pin_flash(candidate, 14, 17);  // sdpa_flash's backward under sdpa_cudnn's backward
  const Comparison comparison = compare(baseline, candidate);
  const std::string label = "sdpa_cudnn 8x16x1024x64 bf16 causal backward cuda";
  const CaseComparison& backward = case_labelled(comparison, label);
  ASSERT_TRUE(backward.kernels);
  const KernelDifferences& d = *backward.kernels;
  EXPECT_EQ(d.removed, 4);  // cuDNN's bprop, dot(dO, O), dQ conversion, a memset
  EXPECT_EQ(d.added, 4);    // flash's dq/dk/dv loop, dot(dO, O), dQ conversion, a copy launched twice
  EXPECT_EQ(comparison.kernel_difference_cases(), 1);
  // Counts per pass: the copy kernel launches twice in each backward.
  const auto copy_kernel = std::find_if(d.kernels.begin(), d.kernels.end(), [](const KernelDifference& k) {
    return k.name.find("direct_copy_kernel_cuda") != std::string::npos;
  });
  ASSERT_NE(copy_kernel, d.kernels.end());
  EXPECT_EQ(copy_kernel->change, KernelChange::added);
  EXPECT_EQ(copy_kernel->candidate->launches_per_pass, 2.0);

  const std::string text = render(comparison, Format::text);
  EXPECT_EQ(lines_with(text, {label + ": 8 kernels (4 removed, 4 added, 0 unchanged); kernel time 189.2 -> 304.8 us "
                                      "per pass"})
                .size(),
            1u)
      << text;
  EXPECT_EQ(lines_with(text, {"  added ", "flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<...>, "
                                          "...>",
                              " 0 -> 1 ", " 219.8 ", " [8,8,16] ", " [256,1,1] ", " 255 ", " 144.0 ", " 0%"})
                .size(),
            1u)
      << text;
  EXPECT_EQ(lines_with(text, {"  added ", "elementwise_kernel<128, 4, gpu_kernel_impl_nocast<direct_copy_kernel_cuda("
                                          "...)>>",
                              " 0 -> 2 ", " 50.8 ", " [16384,1,1] "})
                .size(),
            1u)
      << text;
  EXPECT_EQ(lines_with(text, {"  removed ", kCudnnBackward, " 1 -> 0 ", " 154.6 ", " [132,1,1] ", " 168 "}).size(), 1u)
      << text;
  EXPECT_EQ(lines_with(text, {"  removed ", "compute_dot_do_o_specialized<true, 64> ", " 1 -> 0 "}).size(), 1u) << text;

  const nlohmann::json json = nlohmann::json::parse(render(comparison, Format::json));
  for (const auto& c : json["cases"]) {
    if (c["key"]["label"] != label) continue;
    EXPECT_EQ(c["key"]["pass"], "backward");
    EXPECT_EQ(c["kernel_differences"]["kernels"].size(), 8u);
    // The largest share on either side first: cuDNN's bprop held 82% of the baseline, flash's loop 72% now.
    EXPECT_EQ(c["kernel_differences"]["kernels"][0]["name"], kCudnnBackward);
    EXPECT_EQ(c["kernel_differences"]["kernels"][1]["name"], kFlashBackwardMain);
  }
}

TEST_F(RealKernelDifferences, ARebuiltKernelShowsWhatChangedOfIt) {
  // The same flash kernel name with other registers and occupancy, 50% slower:
  // what a rebuilt kernel (another compiler, another launch bound) looks like.
  const std::string baseline = copy("h200_training_excerpt.db", "baseline.db");
  const std::string candidate = copy("h200_training_excerpt.db", "rebuilt.db");
  {
    SQLite::Database db(candidate, SQLite::OPEN_READWRITE);
    db.exec("UPDATE kernels SET registers_per_thread = 232, est_occupancy_pct = 13, total_us = total_us * 1.5 "
            "WHERE case_id = 14 AND name LIKE '%flash_bwd_dq_dk_dv_loop%'; "
            "UPDATE samples SET gpu_time_us = gpu_time_us * 1.5 WHERE case_id = 14");
  }
  const Comparison comparison = compare(baseline, candidate);
  const std::string label = "sdpa_flash 8x16x1024x64 bf16 causal backward cuda";
  const CaseComparison& flash = case_labelled(comparison, label);
  ASSERT_EQ(flash.time.verdict, TimeVerdict::slower);
  ASSERT_TRUE(flash.kernels);
  const KernelDifferences& d = *flash.kernels;
  EXPECT_EQ(d.changed, 1);
  EXPECT_EQ(d.unchanged, 3);
  ASSERT_EQ(names_of(d), (std::vector<std::string>{kFlashBackwardMain}));
  EXPECT_EQ(d.kernels[0].aspects,
            (std::vector<KernelAspect>{KernelAspect::registers, KernelAspect::occupancy, KernelAspect::time_share}));
  const std::string text = render(comparison, Format::text);
  EXPECT_EQ(lines_with(text, {"  changed ", "flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<", " 1 ", " 219.8 -> 329.7 ",
                              " 72.1% -> 79.5% ", " [8,8,16] ", " 255 -> 232 ", " 144.0 ", " 0% -> 13%"})
                .size(),
            1u)
      << text;
  const std::string markdown = render(comparison, Format::markdown);
  EXPECT_NE(markdown.find(" | 1 | 219.8 -> 329.7 | 72.1% -> 79.5% | [8,8,16] | [256,1,1] | 255 -> 232 | 144.0 | 0% -> 13% |"),
            std::string::npos)
      << markdown;
  const nlohmann::json json = nlohmann::json::parse(render(comparison, Format::json));
  for (const auto& c : json["cases"]) {
    if (c["key"]["label"] != label) continue;
    const nlohmann::json& k = c["kernel_differences"]["kernels"][0];
    EXPECT_EQ(k["change"], "changed");
    EXPECT_EQ(k["aspects"], nlohmann::json::array({"registers", "occupancy", "time_share"}));
    EXPECT_EQ(k["baseline"]["registers_per_thread"], 255);
    EXPECT_EQ(k["candidate"]["registers_per_thread"], 232);
  }
}

}  // namespace
}  // namespace attnsweep::compare
