#pragma once
// A config's `nightly:` section (issue 38; docs/reproducibility.md, "Per-case
// rules"): per-case thresholds and an ignore list for `attnsweep nightly`,
// refused like every config key (file:line:column: key: what is allowed).
#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "runner/common/case_rules.hpp"

namespace attnsweep {

std::vector<CaseRule> read_nightly_rules(const std::string& source, const YAML::Node& node);

}  // namespace attnsweep
