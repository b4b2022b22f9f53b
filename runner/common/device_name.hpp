#pragma once
// The spelling of a device: auto, cpu, cuda or cuda:N. No LibTorch needed.
#include <string>

namespace attnsweep {

bool is_valid_device_name(const std::string& device);
// Throws BadInputError naming what is allowed.
void check_device_name(const std::string& device);

}  // namespace attnsweep
