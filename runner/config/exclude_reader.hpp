#pragma once
// The `exclude` rules of a config: each a mapping of case fields to values that
// drops the cases matching every key, its values checked against what the
// config can plan (variant and dtype names, pass names, windows, sizes).
#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "runner/config/config.hpp"

namespace attnsweep {

// `variant_values`: the catalogue's names and the config's op libraries.
std::vector<ExcludeRule> read_excludes(const std::string& source, const YAML::Node& node,
                                       const std::vector<std::string>& variant_values);

}  // namespace attnsweep
