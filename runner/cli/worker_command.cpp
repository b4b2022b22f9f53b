// `attnsweep worker` (hidden): the worker processes of --isolate (one case)
// and --gpus (--serve), the device probe a parent asks of a worker
// (runner/execute/worker.hpp), and the op library check before a sweep
// (runner/execute/op_library_check.hpp).
#include <cstdlib>
#include <iostream>

#include "runner/cli/commands.hpp"
#include "runner/cli/guarded.hpp"
#include "runner/execute/op_library_check.hpp"
#include "runner/execute/worker.hpp"

namespace attnsweep::cli {

int worker_command(const WorkerOptions& options) {
  if (!options.op_library_files.empty()) {
    execute::load_op_library_files(options.op_library_files);
    // Ended here, without the libraries' static destructors: how a library
    // behaves when attnsweep ends is not what this check is about.
    std::cout.flush();
    std::_Exit(kExitOk);
  }
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
                            !options.no_ceilings, options.op_library_identities});
      return static_cast<int>(kExitOk);
    });
  }
  return guarded("worker error: ", [&] {
    execute::measure_and_store_case({options.config_sha256, options.db_path, options.run_id, options.plan_index,
                                     Device::parse(options.device), options.trace_path,
                                     options.op_library_identities});
    return static_cast<int>(kExitOk);
  });
}

}  // namespace attnsweep::cli
