#include "runner/variants/registry.hpp"

#include <map>

#include "runner/variants/op_library.hpp"
#include "runner/variants/variant_list.hpp"

namespace attnsweep {

// Each variant's factory, defined in its own file.
#define ATTNSWEEP_DECLARE_VARIANT(name, description, cpu, cuda, test_only, relative_cost) const Variant& name##_variant();
ATTNSWEEP_VARIANTS(ATTNSWEEP_DECLARE_VARIANT)
#undef ATTNSWEEP_DECLARE_VARIANT

const Variant* find_variant(const std::string& name) {
#define ATTNSWEEP_REGISTER_VARIANT(name, description, cpu, cuda, test_only, relative_cost) {#name, &name##_variant()},
  static const std::map<std::string, const Variant*> registry = {ATTNSWEEP_VARIANTS(ATTNSWEEP_REGISTER_VARIANT)};
#undef ATTNSWEEP_REGISTER_VARIANT
  const auto found = registry.find(name);
  if (found != registry.end()) return found->second;
  // An op-library variant of the loaded config: loaded on first use (and checked
  // before the run starts, runner/execute/sweep.cpp).
  if (const OpLibrarySpec* spec = find_op_library_spec(name)) return &load_op_library_variant(*spec);
  return nullptr;
}

}  // namespace attnsweep
