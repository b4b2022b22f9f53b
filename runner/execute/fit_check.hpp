#pragma once
// Refuses, before anything runs, a case whose inputs and output alone exceed
// the device's memory: it could only fail, and late. A variable-length batch
// counts its padded tensors, packed rows and masks; a paged cache its pool.
#include <string>

#include "runner/plan/plan.hpp"

namespace attnsweep::execute {

// Throws ConfigError (a BadInputError) at the `shapes` entry of the first case
// that cannot fit: "file:line:column: shapes: case ... needs X GiB ...".
void check_cases_fit(const Plan& plan, const Device& device, double available_bytes, const std::string& config_path);

}  // namespace attnsweep::execute
