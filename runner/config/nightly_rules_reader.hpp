#pragma once
// A config's `nightly:` section (issue 38; docs/reproducibility.md, "Per-case
// rules"): per-case thresholds and an ignore list for `attnsweep nightly`,
// refused like every config key (file:line:column: key: what is allowed). A
// rule's fields are fnmatch globs; one that can never match is refused as an
// exclude rule's unknown value is: a variant pattern must match one of
// `variant_values` (the built-ins and the config's op libraries), a dtype or
// pass pattern one dtype or pass name, and no pattern may leave a '[' unclosed
// (fnmatch would read it as a plain '[' and the rule would match nothing).
#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "runner/common/case_rules.hpp"

namespace attnsweep {

std::vector<CaseRule> read_nightly_rules(const std::string& source, const YAML::Node& node,
                                         const std::vector<std::string>& variant_values);

}  // namespace attnsweep
