#pragma once
// The executor of --isolate and --gpus: worker processes (worker.hpp), one per
// device, fed from one queue of work units (a device takes a unit and runs its
// cases back to back). With --gpus each worker is pinned to its GPU and serves
// case after case (serve_cases); with --isolate every case gets a fresh worker.
// Workers store the cases they measure and say so on their pipe; a case whose
// worker crashed or ran past measure.case_timeout_s comes back as a measured
// failure (the sweep stores it), and a fresh worker takes the rest of its unit.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runner/execute/executor.hpp"

namespace attnsweep::execute {

struct PoolRequest {
  std::string config_sha256;  // of the config text the run stored, which workers read
  std::string db_path;
  std::int64_t run_id = 0;
  std::vector<Device> devices;  // one worker each
  double case_timeout_s = 900;
  bool isolate = false;         // a fresh worker process for every case
  // --gpus: serving workers (`worker --serve`), which record their device in
  // run_devices, and events name the device. Else (--isolate on one device) a
  // worker per case started for it (`worker --plan-index N`), whose time limit
  // counts from its start.
  bool serving = true;
  // Asked before every worker starts (each loads the op libraries anew): throws
  // to stop the run (an op library rebuilt since it began, op_library_watch.hpp).
  std::function<void()> before_worker_start;
  // Handed to each worker, which checks the op libraries it loads against them
  // (OpLibraryWatch::identities(); empty: no check).
  std::string op_library_identities;
};

class WorkerPool final : public Executor {
 public:
  explicit WorkerPool(PoolRequest request);
  ~WorkerPool() override;  // kills the workers still alive
  void begin(CaseQueue queue) override;
  // A device whose worker cannot start twice in a row is left out (its cases
  // go to the others); throws when no device is left.
  CaseEvent next() override;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// Parses --gpus: "all" (every device of `available`) or a comma-separated list
// of distinct indexes below `available`. Throws BadInputError naming what is allowed.
std::vector<Device> parse_gpus(const std::string& text, int available);

}  // namespace attnsweep::execute
