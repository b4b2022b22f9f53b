#include "runner/execute/worker.hpp"

#include <nlohmann/json.hpp>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <thread>
#include <vector>

#include "runner/common/errors.hpp"
#include "runner/common/interrupt.hpp"
#include "runner/common/sha256.hpp"
#include "runner/common/text.hpp"
#include "runner/config/config.hpp"
#include "runner/measure/case_runner.hpp"
#include "runner/device/device.hpp"
#include "runner/plan/plan.hpp"
#include "storage/store.hpp"

namespace attnsweep {
// A device travels in JSON as its one spelling ("cuda:0").
void to_json(nlohmann::json& json, const Device& device) { json = device.to_string(); }
void from_json(const nlohmann::json& json, Device& device) { device = Device::parse(json.get<std::string>()); }
// The probe's JSON carries EnvironmentInfo field by field; one list for both directions.
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(EnvironmentInfo, device, device_name, torch_version, cuda_version,
                                                cudnn_version, driver_version, hostname, sm_count,
                                                device_memory_bytes, l2_cache_bytes, sm_clock_max_mhz)
}  // namespace attnsweep

namespace attnsweep::execute {
namespace {

std::string self_executable() {
  std::vector<char> buffer(4096);
  const ssize_t length = readlink("/proc/self/exe", buffer.data(), buffer.size() - 1);
  if (length <= 0) throw std::runtime_error("cannot find the attnsweep executable (/proc/self/exe)");
  return std::string(buffer.data(), static_cast<std::size_t>(length));
}

std::string describe_exit(int status) {
  if (WIFSIGNALED(status)) {
    const int signal = WTERMSIG(status);
    return "worker killed by signal " + std::to_string(signal) + " (" + strsignal(signal) + ")";
  }
  return "worker exited with code " + std::to_string(WEXITSTATUS(status)) + " without storing the case";
}

}  // namespace

WorkerOutcome run_case_in_worker(const WorkerRequest& request, double timeout_seconds) {
  const std::string executable = self_executable();
  std::vector<std::string> arguments = {executable,
                                        "worker",
                                        "--config", request.config_path,
                                        "--config-sha256", request.config_sha256,
                                        "--db", request.db_path,
                                        "--run-id", std::to_string(request.run_id),
                                        "--plan-index", std::to_string(request.plan_index),
                                        "--device", request.device.to_string()};
  if (!request.trace_path.empty()) {
    arguments.push_back("--trace");
    arguments.push_back(request.trace_path);
  }
  std::vector<char*> argv;
  for (auto& argument : arguments) argv.push_back(argument.data());
  argv.push_back(nullptr);

  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("cannot start a worker: ") + std::strerror(errno));
  if (pid == 0) {
    // Its own process group: a terminal's Ctrl-C reaches the parent, which decides.
    setpgid(0, 0);
    execv(executable.c_str(), argv.data());
    _exit(127);
  }
  setpgid(pid, pid);
  const auto start = std::chrono::steady_clock::now();
  int status = 0;
  for (;;) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const bool interrupted = interrupt_requested();
    if (interrupted || elapsed > timeout_seconds) {
      kill(-pid, SIGKILL);
      waitpid(pid, &status, 0);
      if (interrupted) return {WorkerOutcome::Kind::interrupted, "stopped by signal"};
      return {WorkerOutcome::Kind::timed_out, "worker ran longer than measure.case_timeout_s = " +
                                                  text::fixed(timeout_seconds, 1) + " s and was killed"};
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return {WorkerOutcome::Kind::finished, ""};
  return {WorkerOutcome::Kind::crashed, describe_exit(status)};
}

void measure_and_store_case(const WorkerRequest& request) {
  const Config config = load_config(request.config_path);
  if (sha256_hex(config.yaml_text) != request.config_sha256) {
    throw BadInputError(request.config_path + ": changed since the run began; not measuring it");
  }
  const Plan plan = make_plan(config);
  if (request.plan_index < 0 || request.plan_index >= static_cast<int>(plan.cases.size())) {
    throw BadInputError("plan index " + std::to_string(request.plan_index) + " is not in the plan");
  }
  const Case& c = plan.cases[static_cast<std::size_t>(request.plan_index)];
  CaseRunner runner(request.device, config.measure, config.seed);
  const CaseResult result = runner.run(c, request.trace_path);
  storage::Store(request.db_path).add_case(request.run_id, c, result);
}

std::string device_probe_json(const Device& requested_device) {
  const Device device = resolve_device(requested_device);
  nlohmann::json out = collect_environment(device);
  out["memory_bytes"] = device_memory_bytes(device);
  return out.dump();
}

DeviceProbe probe_device_in_worker(const Device& requested_device) {
  // The device went through Device::parse: its text is one of auto, cpu, cuda, cuda:N.
  const std::string command =
      "'" + self_executable() + "' worker --probe --device '" + requested_device.to_string() + "' 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) throw std::runtime_error("cannot start the device probe: " + std::string(std::strerror(errno)));
  std::string output;
  std::array<char, 4096> buffer{};
  while (fgets(buffer.data(), buffer.size(), pipe)) output += buffer.data();
  const int status = pclose(pipe);
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  // The JSON is the last line; anything before it is the libraries' own chatter.
  const auto start = output.rfind("\n{");
  const std::string last = start == std::string::npos ? output : output.substr(start + 1);
  if (code == kExitBadInput) throw BadInputError(output.substr(0, output.find_last_not_of("\n") + 1));
  const auto json = nlohmann::json::parse(last, nullptr, /*allow_exceptions=*/false);
  if (code != 0 || !json.is_object()) throw std::runtime_error("the device probe failed: " + output);
  DeviceProbe probe;
  probe.environment = json.get<EnvironmentInfo>();
  probe.memory_bytes = json.value("memory_bytes", 0.0);
  return probe;
}

}  // namespace attnsweep::execute
