// `attnsweep worker` (hidden): the worker process of --isolate, and the device
// probe its parent asks of a worker (runner/execute/worker.hpp).
#include <iostream>

#include "runner/cli/commands.hpp"
#include "runner/cli/guarded.hpp"
#include "runner/execute/worker.hpp"

namespace attnsweep::cli {

int worker_command(const WorkerOptions& options) {
  if (options.probe) {
    // No prefix: the parent shows the message as its own error line.
    return guarded("", [&] {
      std::cout << execute::device_probe_json(Device::parse(options.device)) << std::endl;
      return static_cast<int>(kExitOk);
    });
  }
  if (options.serve) {
    return guarded("worker error: ", [&] {
      execute::serve_cases({options.config_sha256, options.db_path, options.run_id, Device::parse(options.device),
                            !options.no_ceilings});
      return static_cast<int>(kExitOk);
    });
  }
  return guarded("worker error: ", [&] {
    execute::measure_and_store_case({options.config_sha256, options.db_path, options.run_id,
                                     options.plan_index, Device::parse(options.device), options.trace_path});
    return static_cast<int>(kExitOk);
  });
}

}  // namespace attnsweep::cli
