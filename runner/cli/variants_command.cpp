// `attnsweep variants`: the catalogue, and what runs on this machine.
#include <iostream>

#include "runner/cli/commands.hpp"
#include "runner/cli/guarded.hpp"
#include "runner/device/device.hpp"
#include "runner/report/variants_table.hpp"
#include "runner/report/writers.hpp"

namespace attnsweep::cli {

int variants_command(const std::string& device_option) {
  return guarded("error: ", [&] {
    const Device device = resolve_device(Device::parse(device_option.empty() ? "auto" : device_option));
    report::write_table(std::cout, report::variants_table(device), report::Format::table);
    std::cout << "device: " << device << " (" << cuda_device_count() << " CUDA device(s) visible). "
              << "A backend can still refuse a dtype or shape; such cases are stored as 'unsupported'.\n";
    return static_cast<int>(kExitOk);
  });
}

}  // namespace attnsweep::cli
