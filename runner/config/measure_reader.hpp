#pragma once
// The `measure` mapping of a config: each setting's range and its one rule
// across settings (max_samples at least min_samples); defaults in MeasureSettings.
#include <yaml-cpp/yaml.h>

#include <string>

#include "runner/common/identities.hpp"
#include "runner/config/measure_settings.hpp"

namespace attnsweep {

MeasureSettings read_measure_settings(const std::string& source, const YAML::Node& node);

// The one warning for `measure.counters` on a device that reads no counters (the
// CPU), which plan and run print once; "" where they are read or not asked for.
std::string counters_warning(const MeasureSettings& measure, const Device& device);

}  // namespace attnsweep
