#pragma once
// The worker process of --isolate and --gpus: the same binary started as
// `attnsweep worker ...`, which measures cases, stores each through the same
// Store and says how it ended on its stdout. Both sides live here: starting a
// worker and reading its answers (the parent; WorkerPool watches it), and what
// the worker does. Also the device probe, asked of a worker so that the
// parent of an isolated sweep never initializes CUDA itself.
#include <cstdint>
#include <sys/types.h>

#include <string>
#include <vector>

#include "runner/common/identities.hpp"
#include "runner/device/environment.hpp"
#include "runner/execute/executor.hpp"

namespace attnsweep::execute {

struct WorkerRequest {
  std::string config_sha256;  // of the config text the run stored; the worker reads that text, not a file
  std::string db_path;
  std::int64_t run_id = 0;
  int plan_index = 0;
  Device device;
  std::string trace_path;
  std::string op_library_identities;  // the parent's OpLibraryWatch::identities(); empty: not checked
};

// About once a minute with cases in flight the sweep renews its claim on the run.
inline constexpr double kKeepAliveSeconds = 60;

// The worker's side: measure one case of the plan, store it, and answer on
// stdout as serve_cases does (`stored`). Throws BadInputError when the config
// changed since the run began.
void measure_and_store_case(const WorkerRequest& request);

// --gpus: a worker that serves one device of a run, case after case, in one
// process (inputs and references are reused as in a sweep without workers).
// It measures the device's ceilings (unless told not to), records the device
// (run_devices), answers `ready`, then reads one case per line on stdin,
// "<plan_index>\t<trace path or empty>", measures and stores it, and answers
// `stored` (or `kept`: the run held the case already). It ends at the end of
// stdin, or, answering `retiring`, after a case that left its CUDA context
// unusable. Answers are lines on stdout that start with kWorkerAnswer.
struct ServeRequest {
  std::string config_sha256;
  std::string db_path;
  std::int64_t run_id = 0;
  Device device;
  bool measure_ceilings = true;  // false when a restarted worker's device has them already
  std::string op_library_identities;  // as WorkerRequest's
};
void serve_cases(const ServeRequest& request);
inline constexpr const char* kWorkerAnswer = "@attnsweep ";

// One line a worker wrote on stdout, read by its parent.
struct WorkerAnswer {
  // refused: the worker measured nothing and the run must stop (an op library
  // rebuilt since the run began: op_library_watch.hpp); `reason` says why.
  enum class Kind { ready, stored, retiring, refused, other } kind = Kind::other;  // other: not an answer (libraries' output)
  std::string gpu_uuid;  // ready: its GPU's, empty on the CPU
  StoredCase stored;     // stored: how the case ended
  std::string reason;    // refused: why, one line
};
WorkerAnswer parse_worker_answer(const std::string& line);

// The standard streams of a worker process; -1 leaves one as the parent's.
struct ChildStreams {
  int input_fd = -1;
  int output_fd = -1;
  int error_fd = -1;
};
// Starts this executable with `arguments` as a worker process (its own process
// group, killed when the parent dies). Throws when it cannot fork.
pid_t start_worker_process(const std::vector<std::string>& arguments, const ChildStreams& streams);
// "worker killed by signal 6 (Aborted)", from a waitpid status.
std::string describe_worker_exit(int status);

// What the parent of an isolated sweep needs to know about the device, asked
// of a worker so that the parent itself never initializes CUDA.
struct DeviceProbe {
  EnvironmentInfo environment;  // environment.device is the resolved device (cpu, cuda:N)
  double memory_bytes = 0;      // device_memory_bytes() of it
};
// Throws BadInputError with the worker's message for a device that is not there.
DeviceProbe probe_device_in_worker(const Device& requested_device);
// The worker's side of the probe: the JSON line it prints on stdout.
std::string device_probe_json(const Device& requested_device);

}  // namespace attnsweep::execute
