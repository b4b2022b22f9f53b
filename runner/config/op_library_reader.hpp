#pragma once
// A variant of kind op_library, as a config maps it (docs/op-libraries.md): the
// library, the op and how attnsweep's arguments reach it; every field checked
// before anything is loaded.
#include <yaml-cpp/yaml.h>

#include <string>

#include "runner/variants/op_library_spec.hpp"

namespace attnsweep {

// `node` is the mapping written at `key` ("variants[2]") of the config `source`;
// a relative library path is taken from the config file's folder.
OpLibrarySpec read_op_library(const std::string& source, const YAML::Node& node, const std::string& key);

}  // namespace attnsweep
