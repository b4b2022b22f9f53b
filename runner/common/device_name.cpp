#include "runner/common/device_name.hpp"

#include "runner/common/errors.hpp"

namespace attnsweep {

bool is_valid_device_name(const std::string& device) {
  const bool indexed = device.rfind("cuda:", 0) == 0 && device.size() > 5 && device.size() < 10 &&
                       device.find_first_not_of("0123456789", 5) == std::string::npos;
  return device == "auto" || device == "cpu" || device == "cuda" || indexed;
}

void check_device_name(const std::string& device) {
  if (!is_valid_device_name(device)) {
    throw BadInputError("unknown device '" + device + "'; allowed: auto, cpu, cuda, cuda:N");
  }
}

}  // namespace attnsweep
