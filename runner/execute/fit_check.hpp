#pragma once
// Refuses, before anything runs, a case whose inputs and output alone exceed
// the device's memory: it could only fail, and late.
#include <string>

#include "runner/plan/plan.hpp"

namespace attnsweep::execute {

// Throws BadInputError naming the first case that cannot fit and the sizes.
void check_cases_fit(const Plan& plan, const Device& device, double available_bytes, const std::string& config_path);

}  // namespace attnsweep::execute
