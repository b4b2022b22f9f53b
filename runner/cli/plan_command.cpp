// `attnsweep plan`: validate a config and list its cases; runs nothing.
#include <iostream>

#include "runner/cli/commands.hpp"
#include "runner/cli/guarded.hpp"
#include "runner/config/config.hpp"
#include "runner/device/device.hpp"
#include "runner/execute/fit_check.hpp"
#include "runner/plan/plan.hpp"
#include "runner/report/plan_table.hpp"
#include "runner/report/writers.hpp"

namespace attnsweep::cli {

int plan_command(const std::string& config_path, const std::string& device_option) {
  return guarded("error: ", [&] {
    const Config config = load_config(config_path);
    const Plan plan = make_plan(config);
    const Device requested = device_option.empty() ? config.device : Device::parse(device_option);
    // Planning needs no GPU: "auto" is resolved, "cuda" and "cuda:N" are listed as they would run on a GPU.
    const Device device = requested.is_auto() ? resolve_device(requested) : requested;
    // The memory check `run` makes, wherever the memory can be known here: the machine's RAM
    // for the CPU, a GPU's only when it is present (planning for an absent GPU stays possible).
    if (device.is_cpu() || (device.is_cuda() && device.cuda_index() < cuda_device_count())) {
      execute::check_cases_fit(plan, device, device_memory_bytes(device), config_path);
    }
    report::write_table(std::cout, report::plan_table(plan, device), report::Format::table);
    std::cout << plan.cases.size() << " cases";
    if (plan.excluded) std::cout << ", " << plan.excluded << " excluded";
    if (plan.duplicates) std::cout << ", " << plan.duplicates << " duplicates dropped";
    std::cout << " (" << config_path << ", device " << device << ")\n";
    return static_cast<int>(kExitOk);
  });
}

}  // namespace attnsweep::cli
