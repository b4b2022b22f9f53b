#pragma once
// The catalogue of attention variants: names and where they can run, built
// from variant_list.hpp. It holds no LibTorch code, so config validation and
// `attnsweep variants` can use it; the implementations live in
// runner/variants/<name>.cpp behind registry.hpp.
#include <string>
#include <vector>

#include "runner/common/identities.hpp"

namespace attnsweep {

struct VariantInfo {
  std::string name;
  std::string description;
  bool runs_on_cpu = false;
  bool runs_on_cuda = false;
  bool test_only = false;  // listed only when ATTNSWEEP_TEST_VARIANTS=1 (fault-injection tests)
  int relative_cost = 10;  // expected GPU time per forward, tenths of sdpa_flash's (variant_list.hpp)
};

// The variants a config may name; test-only ones only when ATTNSWEEP_TEST_VARIANTS=1.
const std::vector<VariantInfo>& variant_catalog();
std::vector<std::string> variant_names();
const VariantInfo* find_variant_info(const std::string& name);
// Whether the variant has an implementation for this kind of device.
bool variant_runs_on(const VariantInfo& info, const Device& device);

}  // namespace attnsweep
