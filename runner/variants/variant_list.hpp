#pragma once
// Every attention variant, named once. Each line: the name (its factory is
// `const Variant& <name>_variant()`, defined in runner/variants/<file>.cpp),
// a description, whether it runs on the CPU and on CUDA, whether it is a
// fault-injection variant for the reliability tests (listed only when
// ATTNSWEEP_TEST_VARIANTS=1), and its expected GPU time per forward relative to
// sdpa_flash, in tenths (sdpa_flash = 10; measured on the H200 at the study's
// shape, proofs/report/h200-blog.md), which the shard split and the multi-GPU
// queue use to balance work (runner/plan/cost.hpp). The LibTorch-free catalogue (variant_names.cpp)
// and the registry of implementations (registry.cpp) are both built from this
// list, so they cannot disagree. No LibTorch here.
//
// Adding a variant: one file runner/variants/<name>.cpp defining <name>_variant()
// (CMake picks it up by itself) and one line below. docs/development.md.
#define ATTNSWEEP_VARIANTS(X)                                                                                             \
  X(naive, "matmul(q, k^T) * scale, out-of-place masked_fill(-inf), softmax, matmul(v)", true, true, false, 110)          \
  X(naive_inplace, "as naive, with in-place masked_fill_", true, true, false, 100)                                        \
  X(sdpa_math, "scaled_dot_product_attention pinned to the math (composite) backend", true, true, false, 270)             \
  X(sdpa_efficient, "scaled_dot_product_attention pinned to memory-efficient attention", false, true, false, 15)          \
  X(sdpa_flash, "scaled_dot_product_attention pinned to FlashAttention (CPU: PyTorch's flash kernel)", true, true,        \
    false, 10)                                                                                                            \
  X(sdpa_cudnn, "scaled_dot_product_attention pinned to cuDNN attention", false, true, false, 7)                          \
  X(sdpa_auto, "scaled_dot_product_attention, PyTorch chooses the backend (recorded)", true, true, false, 7)              \
  X(test_abort, "TEST ONLY: calls abort() in the forward", true, true, true, 10)                                          \
  X(test_hang, "TEST ONLY: never returns from the forward", true, true, true, 10)                                         \
  X(test_device_fault, "TEST ONLY: out-of-bounds index (device-side assert on CUDA)", true, true, true, 10)              \
  X(test_nondeterministic, "TEST ONLY: naive, declaring itself nondeterministic as PyTorch's ops do", true, true, true,   \
    110)
