#pragma once
// --isolate: every case runs in a worker process (worker.hpp), which measures
// and stores it. A crash, a poisoned CUDA context or a hang then costs one
// case; the parent stores that case as crashed or timeout.
#include <cstdint>
#include <functional>
#include <string>

#include "runner/execute/executor.hpp"

namespace attnsweep::execute {

struct WorkerContext {
  std::string config_sha256;  // of the config text stored with the run, which workers read
  std::string db_path;
  std::int64_t run_id = 0;
  Device device;
  double case_timeout_s = 900;
  // Called about once a minute while a worker runs; false: the run was taken
  // over, the worker is killed and the case given up.
  std::function<bool()> keep_alive;
};

class WorkerExecutor final : public Executor {
 public:
  explicit WorkerExecutor(WorkerContext context) : context_(std::move(context)) {}
  CaseOutcome run(const Case& c, const std::string& trace_path) override;

 private:
  WorkerContext context_;
};

}  // namespace attnsweep::execute
