#pragma once
// The `shapes` of a config: blocks of axes crossed with each other, zipped rows
// that set axes together, and variable-length batches whose lengths are listed
// or drawn from the config's seed (docs/config.md, "Shapes").
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <string>
#include <vector>

#include "runner/config/config.hpp"

namespace attnsweep {

// A mapping of shape axes or a non-empty list of them; `seed` is the config's,
// for drawn lengths.
std::vector<ShapeBlock> read_shapes(const std::string& source, const YAML::Node& node, std::uint64_t seed);

}  // namespace attnsweep
