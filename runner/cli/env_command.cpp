// `attnsweep env`: the environment fingerprint a run would record, as JSON,
// without running a sweep (docs/cli.md).
#include <iostream>

#include "runner/cli/commands.hpp"
#include "runner/cli/guarded.hpp"
#include "runner/execute/fingerprint.hpp"

namespace attnsweep::cli {

int env_command(const std::string& device_option) {
  return guarded("error: ", [&] {
    std::cout << execute::environment_fingerprint_json(Device::parse(device_option.empty() ? "auto" : device_option))
              << std::endl;
    return static_cast<int>(kExitOk);
  });
}

}  // namespace attnsweep::cli
