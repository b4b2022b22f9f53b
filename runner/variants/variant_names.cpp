#include "runner/variants/variant_names.hpp"

#include <cstdlib>
#include <cstring>

#include "runner/variants/variant_list.hpp"

namespace attnsweep {

const std::vector<VariantInfo>& variant_catalog() {
#define ATTNSWEEP_VARIANT_INFO(name, description, cpu, cuda, test_only, relative_cost) {#name, description, cpu, cuda, test_only, relative_cost},
  static const std::vector<VariantInfo> everything = {ATTNSWEEP_VARIANTS(ATTNSWEEP_VARIANT_INFO)};
#undef ATTNSWEEP_VARIANT_INFO
  static const std::vector<VariantInfo> without_test_variants = [] {
    std::vector<VariantInfo> kept;
    for (const auto& info : everything) {
      if (!info.test_only) kept.push_back(info);
    }
    return kept;
  }();
  // Variants that fail on purpose exist for the reliability tests (docs/reliability.md).
  const char* flag = std::getenv("ATTNSWEEP_TEST_VARIANTS");
  return flag && std::strcmp(flag, "1") == 0 ? everything : without_test_variants;
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

bool variant_runs_on(const VariantInfo& info, const Device& device) {
  return device.is_cuda() ? info.runs_on_cuda : info.runs_on_cpu;
}

}  // namespace attnsweep
