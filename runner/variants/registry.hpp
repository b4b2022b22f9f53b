#pragma once
#include <string>

#include "runner/variants/variant.hpp"

namespace attnsweep {

// The implementation of a catalogue variant; nullptr for an unknown name.
const Variant* find_variant(const std::string& name);

}  // namespace attnsweep
