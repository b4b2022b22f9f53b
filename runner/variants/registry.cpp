#include "runner/variants/registry.hpp"

#include <map>

namespace attnsweep {

const Variant& naive_variant();
const Variant& naive_inplace_variant();
const Variant& sdpa_math_variant();
const Variant& sdpa_efficient_variant();
const Variant& sdpa_flash_variant();
const Variant& sdpa_cudnn_variant();
const Variant& sdpa_auto_variant();
const Variant& test_abort_variant();
const Variant& test_hang_variant();
const Variant& test_device_fault_variant();

const Variant* find_variant(const std::string& name) {
  static const std::map<std::string, const Variant*> registry = {
      {"naive", &naive_variant()},
      {"naive_inplace", &naive_inplace_variant()},
      {"sdpa_math", &sdpa_math_variant()},
      {"sdpa_efficient", &sdpa_efficient_variant()},
      {"sdpa_flash", &sdpa_flash_variant()},
      {"sdpa_cudnn", &sdpa_cudnn_variant()},
      {"sdpa_auto", &sdpa_auto_variant()},
      {"test_abort", &test_abort_variant()},
      {"test_hang", &test_hang_variant()},
      {"test_device_fault", &test_device_fault_variant()},
  };
  const auto found = registry.find(name);
  return found == registry.end() ? nullptr : found->second;
}

}  // namespace attnsweep
