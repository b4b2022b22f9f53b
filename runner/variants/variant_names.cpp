#include "runner/variants/variant_names.hpp"

#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>

#include "runner/variants/op_library_spec.hpp"
#include "runner/variants/variant_list.hpp"

namespace attnsweep {
namespace {

// The op-library variants of the last config loaded (parse_config registers
// them), and their catalogue entries: a deque, so the pointers
// find_variant_info returns stay valid when more are registered.
struct OpLibraries {
  std::mutex mutex;
  std::map<std::string, OpLibrarySpec> specs;
  std::deque<VariantInfo> infos;
};
OpLibraries& op_libraries() {
  static OpLibraries instance;
  return instance;
}

}  // namespace

void register_op_library_specs(const std::map<std::string, OpLibrarySpec>& specs) {
  OpLibraries& all = op_libraries();
  std::lock_guard<std::mutex> lock(all.mutex);
  for (const auto& [name, spec] : specs) {
    all.specs[name] = spec;
    bool known = false;
    for (const auto& info : all.infos) known = known || info.name == name;
    // Where it runs is known only once the library is loaded: the op refuses a
    // device it has no kernel for, and the case is then 'unsupported'.
    if (!known) all.infos.push_back({name, "op " + spec.op + " from " + spec.library_as_written, true, true, false, 10});
  }
}

const OpLibrarySpec* find_op_library_spec(const std::string& name) {
  OpLibraries& all = op_libraries();
  std::lock_guard<std::mutex> lock(all.mutex);
  const auto found = all.specs.find(name);
  return found == all.specs.end() ? nullptr : &found->second;
}

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
  OpLibraries& all = op_libraries();
  std::lock_guard<std::mutex> lock(all.mutex);
  for (const auto& info : all.infos) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

bool variant_runs_on(const VariantInfo& info, const Device& device) {
  return device.is_cuda() ? info.runs_on_cuda : info.runs_on_cpu;
}

}  // namespace attnsweep
