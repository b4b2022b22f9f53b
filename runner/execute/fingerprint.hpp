#pragma once
// The environment fingerprint of `attnsweep env`: what a run records about the
// machine, software and GPU state (docs/schema.md), as one JSON object, without
// running a sweep.
#include <string>

#include "runner/common/identities.hpp"

namespace attnsweep::execute {

// Resolves `device` (auto, cpu, cuda, cuda:N) and describes it; throws
// BadInputError for a device this machine lacks.
std::string environment_fingerprint_json(const Device& device);

}  // namespace attnsweep::execute
