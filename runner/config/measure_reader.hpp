#pragma once
// The `measure` mapping of a config: each setting's range and its one rule
// across settings (max_samples at least min_samples); defaults in MeasureSettings.
#include <yaml-cpp/yaml.h>

#include <string>

#include "runner/config/measure_settings.hpp"

namespace attnsweep {

MeasureSettings read_measure_settings(const std::string& source, const YAML::Node& node);

}  // namespace attnsweep
