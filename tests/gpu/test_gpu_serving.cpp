// Serving masks on a GPU (issue 25), through the binary: causal bottom-right and
// sliding windows run on every built-in variant that PyTorch's C++ API can run
// them with (flash's and the memory-efficient kernel's own ops, SDPA with an
// explicit mask otherwise), each right against float64 with the same mask, and
// differentiable where PyTorch is. Skips where no CUDA device exists.
#include <gtest/gtest.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include <iostream>
#include <string>

#include "tests/support/cli_cuda_sweep.hpp"
#include "tests/support/gpu_checks.hpp"
#include "tests/support/run_attnsweep.hpp"

namespace {

using attnsweep::testing::Outcome;
using attnsweep::testing::scalar;

// Each test sweeps every built-in variant in bf16 (each case a short burst)
// under its masks and shapes, then asks the database what ran and how.
class GpuServing : public attnsweep::testing::CudaSweepTest {
 protected:
  GpuServing() : CudaSweepTest("attnsweep-gpu-serving") {}

  // Runs the sweep under `masks_and_shapes` from NAME.yaml into NAME.db (db_),
  // then holds what every serving sweep must: each case ran or is unsupported,
  // and each that ran is right against float64 with the same mask.
  // `case_line`: how all() lists a case (an SQL expression over `cases`).
  void sweep_every_variant(const std::string& name, const std::string& masks_and_shapes, const char* case_line) {
    case_line_ = case_line;
    const Outcome outcome = sweep(name,
                                  "variants: [naive, naive_inplace, sdpa_math, sdpa_efficient, sdpa_flash, "
                                  "sdpa_cudnn, sdpa_auto]\n"
                                  "dtypes: [bf16]\n" +
                                      masks_and_shapes +
                                      "measure: {regime: burst, warmup: 2, profiled_forwards: 2, min_samples: 5, "
                                      "max_samples: 20}\n");
    ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
    EXPECT_EQ(scalar(db_, "SELECT count(*) FROM cases WHERE status NOT IN ('ok', 'unsupported')"), "0") << all("1");
    EXPECT_EQ(scalar(db_, "SELECT count(*) FROM cases WHERE status = 'ok' AND numerics != 'ok'"), "0") << all("1");
  }

  // The cases that `where` selects, one line each: what the test prints, and
  // shows with a failure.
  std::string all(const std::string& where) const {
    return scalar(db_, "SELECT group_concat(" + std::string(case_line_) + ", '\n') FROM cases WHERE " + where);
  }

  const char* case_line_ = "variant";
};

TEST_F(GpuServing, BottomRightAndWindowsAreRightOnEveryVariantThatRunsThem) {
  ASSERT_NO_FATAL_FAILURE(sweep_every_variant(
      "serving",
      "causal: [bottom_right]\n"
      "window: [none, {left: 256}]\n"
      "passes: [forward, backward]\n"
      "shapes:\n"
      "  - {batch: 2, heads: 8, seq_len_q: 64, seq_len_kv: 1024, head_dim: 64}\n",
      "variant || ' ' || pass || ' ' || ifnull(window_left, '-') || ': ' || status || ' ' || ifnull(numerics, '-') || "
      "' ' || ifnull(rel_error, '-') || ' ' || ifnull(sdpa_backend, '-') || ' ' || ifnull(error_message, '')"));
  EXPECT_EQ(scalar(db_, "SELECT count(*) FROM cases WHERE status = 'ok' AND pass = 'backward' AND "
                        "max(grad_rel_error_q, grad_rel_error_k, grad_rel_error_v) > 0.02"),
            "0")
      << all("pass = 'backward'");
  // Flash runs both masks through its own ops (no mask tensor), forward and backward, with its own backward.
  EXPECT_EQ(scalar(db_, "SELECT count(*) FROM cases WHERE variant = 'sdpa_flash' AND status = 'ok' AND "
                        "sdpa_backend = 'flash_attention' AND (pass = 'forward' OR sdpa_backend_backward = 'flash_attention')"),
            "4")
      << all("variant = 'sdpa_flash'");
  // The memory-efficient kernel: bottom right through its own mask type, the window through a mask.
  EXPECT_EQ(scalar(db_, "SELECT count(*) FROM cases WHERE variant = 'sdpa_efficient' AND status = 'ok' AND "
                        "(pass = 'forward' OR sdpa_backend_backward = 'efficient_attention')"),
            "4")
      << all("variant = 'sdpa_efficient'");
  // The naive variants and math always can; math's backward is its decomposition.
  EXPECT_EQ(scalar(db_, "SELECT count(*) FROM cases WHERE variant IN ('naive', 'naive_inplace', 'sdpa_math') AND "
                        "status = 'ok'"),
            "12")
      << all("variant IN ('naive', 'naive_inplace', 'sdpa_math')");
  // FLOPs count the unmasked pairs: bottom right, row i of 64 sees 961 + i keys; the window 257 keys a row.
  EXPECT_EQ(scalar(db_, "SELECT DISTINCT CAST(flops AS INTEGER) FROM cases WHERE window_left IS NULL AND pass = 'forward'"),
            std::to_string(4LL * 2 * 8 * 64 * (64LL * 961 + 63 * 64 / 2)));
  EXPECT_EQ(scalar(db_, "SELECT DISTINCT CAST(flops AS INTEGER) FROM cases WHERE window_left = 256 AND pass = 'forward'"),
            std::to_string(4LL * 2 * 8 * 64 * (64LL * 257)));
  // Whatever is unsupported says why.
  EXPECT_EQ(scalar(db_, "SELECT count(*) FROM cases WHERE status = 'unsupported' AND ifnull(error_message, '') = ''"), "0")
      << all("status = 'unsupported'");
  std::cout << all("1") << "\n";
}

// A variable-length batch: flash and the memory-efficient kernel through their
// varlen entry points (packed rows, their own kernels, no mask tensor), the rest
// padded with a mask; each right against float64 over the real rows; a paged
// cache unsupported for every built-in variant.
TEST_F(GpuServing, VariableLengthBatchesRunPackedOnFlashAndEfficientAndPaddedElsewhere) {
  ASSERT_NO_FATAL_FAILURE(sweep_every_variant(
      "varlen",
      "causal: bottom_right\n"
      "window: [none, {left: 64}]\n"
      "shapes:\n"
      "  - {heads: 8, head_dim: 64, varlen: {seq_len_kv: [100, 1024, 333], seq_len_q: 16}}\n"
      "  - {heads: 8, kv_heads: 2, head_dim: 64, page_size: [0, 64],\n"
      "     varlen: {seq_len_kv: [100, 1024, 333], seq_len_q: 16}}\n",
      "variant || ' kv' || kv_heads || ' page' || page_size || ' ' || ifnull(window_left, '-') || ': ' || status || ' ' || "
      "ifnull(numerics, '-') || ' ' || ifnull(rel_error, '-') || ' k' || ifnull(kernels_per_forward, '-') || ' ' || "
      "ifnull(sdpa_backend, '-') || ' ' || ifnull(error_message, '')"));
  // Flash runs all four contiguous batches (MHA and GQA, both masks) with its own kernels alone.
  EXPECT_EQ(scalar(db_, "SELECT count(*) FROM cases WHERE variant = 'sdpa_flash' AND status = 'ok' AND page_size = 0 "
                        "AND memcpy_per_forward = 0 AND memset_per_forward = 0 AND kernels_per_forward BETWEEN 1 AND 2"),
            "4")
      << all("variant = 'sdpa_flash'");
  EXPECT_EQ(scalar(db_, "SELECT count(*) FROM kernels k JOIN cases c USING (case_id) WHERE c.variant = 'sdpa_flash' "
                        "AND k.kind = 'kernel' AND lower(k.name) NOT LIKE '%flash%'"),
            "0");
  // The memory-efficient kernel: the MHA batch without a window; GQA and the window are unsupported, saying why.
  EXPECT_EQ(scalar(db_, "SELECT group_concat(status || ' ' || kv_heads || ' ' || ifnull(window_left, '-'), ', ') FROM "
                        "(SELECT * FROM cases WHERE variant = 'sdpa_efficient' AND page_size = 0 ORDER BY plan_index)"),
            "ok 8 -, unsupported 8 64, unsupported 2 -, unsupported 2 64")
      << all("variant = 'sdpa_efficient'");
  // The padded variants always can, on every contiguous batch.
  EXPECT_EQ(scalar(db_, "SELECT count(*) FROM cases WHERE variant IN ('naive', 'naive_inplace', 'sdpa_math', 'sdpa_auto') "
                        "AND page_size = 0 AND status = 'ok'"),
            "16")
      << all("page_size = 0");
  // No built-in variant reads pages.
  EXPECT_EQ(scalar(db_, "SELECT count(*) FROM cases WHERE page_size = 64 AND status = 'unsupported' AND error_message LIKE "
                        "'a paged KV cache: PyTorch''s attention has no entry point that reads one%'"),
            "14");
  // FLOPs of the real pairs: 16 queries bottom right over 100, 1024 and 333 keys.
  EXPECT_EQ(scalar(db_, "SELECT DISTINCT CAST(flops AS INTEGER) FROM cases WHERE window_left IS NULL"),
            std::to_string(4LL * 8 * 64 * ((16 * 85 + 120) + (16 * 1009 + 120) + (16 * 318 + 120))));
  std::cout << all("1") << "\n";
}

// Issue 36: a variable-length batch's backward on every variant that runs its
// forward: flash and the memory-efficient kernel through their variable-length
// entry points, differentiated with respect to the packed rows (their own
// variable-length backward kernels); the rest padded with the mask. Every
// gradient right per sequence against float64 autograd.
TEST_F(GpuServing, VariableLengthBackwardRunsWhereItsForwardRunsWithTheKernelsOwnBackward) {
  ASSERT_NO_FATAL_FAILURE(sweep_every_variant(
      "varlen_backward",
      "causal: bottom_right\n"
      "window: [none, {left: 64}]\n"
      "passes: [forward, backward, forward_backward]\n"
      "shapes:\n"
      "  - {heads: 8, head_dim: 64, varlen: {seq_len_kv: [100, 1024, 333], seq_len_q: [100, 1024, 333]}}\n"
      "  - {heads: 8, kv_heads: 2, head_dim: 64, varlen: {seq_len_kv: [100, 1024, 333], seq_len_q: 16}}\n",
      "variant || ' ' || pass || ' kv' || kv_heads || ' ' || ifnull(window_left, '-') || ': ' || status || ' ' || "
      "ifnull(numerics, '-') || ' ' || ifnull(max(grad_rel_error_q, grad_rel_error_k, grad_rel_error_v), '-') || ' ' || "
      "ifnull(sdpa_backend_backward, '-') || ' ' || ifnull(error_message, '')"));
  // A backward runs wherever the forward ran, and is unsupported only where the forward is
  // (cuDNN aside: whether its backward takes the padded batch's mask is cuDNN's to say).
  EXPECT_EQ(scalar(db_, "SELECT count(*) FROM cases b JOIN cases f ON f.variant = b.variant AND f.kv_heads = b.kv_heads "
                        "AND f.window_left IS b.window_left AND f.seq_lens_q = b.seq_lens_q AND f.pass = 'forward' "
                        "WHERE b.pass != 'forward' AND b.status != f.status AND b.variant != 'sdpa_cudnn'"),
            "0")
      << all("1");
  // The padded variants always can: 4 variants x 2 batches x 2 masks x 2 passes.
  EXPECT_EQ(scalar(db_, "SELECT count(*) FROM cases WHERE variant IN ('naive', 'naive_inplace', 'sdpa_math', 'sdpa_auto') "
                        "AND pass != 'forward' AND status = 'ok'"),
            "32")
      << all("1");
  EXPECT_EQ(scalar(db_, "SELECT count(*) FROM cases WHERE status = 'ok' AND pass != 'forward' AND "
                        "max(grad_rel_error_q, grad_rel_error_k, grad_rel_error_v) > 0.02"),
            "0")
      << all("pass != 'forward'");
  // Flash's and the efficient kernel's own variable-length backward (autograd's nodes of their ops).
  EXPECT_EQ(scalar(db_, "SELECT count(*) FROM cases WHERE variant = 'sdpa_flash' AND pass != 'forward' AND "
                        "status = 'ok' AND sdpa_backend_backward = 'flash_attention'"),
            "8")
      << all("variant = 'sdpa_flash'");
  EXPECT_EQ(scalar(db_, "SELECT count(*) FROM cases WHERE variant = 'sdpa_efficient' AND pass != 'forward' AND "
                        "status = 'ok' AND sdpa_backend_backward = 'efficient_attention'"),
            "2")
      << all("variant = 'sdpa_efficient'");
  std::cout << all("pass != 'forward'") << "\n";
}

}  // namespace
