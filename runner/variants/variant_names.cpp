#include "runner/variants/variant_names.hpp"

#include <cstdlib>
#include <cstring>

namespace attnsweep {

const std::vector<VariantInfo>& variant_catalog() {
  static const std::vector<VariantInfo> catalog = {
      {"naive", "matmul(q, k^T) * scale, out-of-place masked_fill(-inf), softmax, matmul(v)", true, true},
      {"naive_inplace", "as naive, with in-place masked_fill_", true, true},
      {"sdpa_math", "scaled_dot_product_attention pinned to the math (composite) backend", true, true},
      {"sdpa_efficient", "scaled_dot_product_attention pinned to memory-efficient attention", false, true},
      {"sdpa_flash", "scaled_dot_product_attention pinned to FlashAttention (CPU: PyTorch's flash kernel)", true, true},
      {"sdpa_cudnn", "scaled_dot_product_attention pinned to cuDNN attention", false, true},
      {"sdpa_auto", "scaled_dot_product_attention, PyTorch chooses the backend (recorded)", true, true},
  };
  // Variants that fail on purpose, for the reliability tests (docs/reliability.md).
  static const std::vector<VariantInfo> with_test_variants = [] {
    std::vector<VariantInfo> all = catalog;
    all.push_back({"test_abort", "TEST ONLY: calls abort() in the forward", true, true, true});
    all.push_back({"test_hang", "TEST ONLY: never returns from the forward", true, true, true});
    all.push_back({"test_device_fault", "TEST ONLY: out-of-bounds index (device-side assert on CUDA)", true, true, true});
    return all;
  }();
  const char* flag = std::getenv("ATTNSWEEP_TEST_VARIANTS");
  return flag && std::strcmp(flag, "1") == 0 ? with_test_variants : catalog;
}

std::vector<std::string> variant_names() {
  std::vector<std::string> names;
  for (const auto& info : variant_catalog()) names.push_back(info.name);
  return names;
}

const VariantInfo* find_variant_info(const std::string& name) {
  for (const auto& info : variant_catalog()) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

}  // namespace attnsweep
