#include "runner/execute/worker.hpp"

#include <fcntl.h>
#include <nlohmann/json.hpp>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <sstream>
#include <vector>

#include "runner/common/errors.hpp"
#include "runner/common/interrupt.hpp"
#include "runner/common/sha256.hpp"
#include "runner/config/config.hpp"
#include "runner/execute/op_library_watch.hpp"
#include "runner/measure/case_runner.hpp"
#include "runner/device/ceilings.hpp"
#include "runner/device/device.hpp"
#include "runner/device/environment_facts.hpp"
#include "runner/report/case_line.hpp"
#include "runner/plan/plan.hpp"
#include "runner/storage/run_reader.hpp"
#include "runner/storage/store.hpp"
#include "runner/variants/op_library.hpp"

namespace attnsweep::execute {
namespace {

std::string self_executable() {
  std::vector<char> buffer(4096);
  const ssize_t length = readlink("/proc/self/exe", buffer.data(), buffer.size() - 1);
  if (length <= 0) throw std::runtime_error("cannot find the attnsweep executable (/proc/self/exe)");
  return std::string(buffer.data(), static_cast<std::size_t>(length));
}

}  // namespace

// Fork and exec with an argument vector, never through a shell, so no option
// can inject a command. The child gets its own process group (a terminal's
// Ctrl-C reaches the parent, which decides) and is killed by the kernel when
// the parent dies (PR_SET_PDEATHSIG), so a killed sweep leaves no worker
// running on.
pid_t start_worker_process(const std::vector<std::string>& arguments, const ChildStreams& streams) {
  const std::string executable = self_executable();
  std::vector<std::string> all = {executable};
  all.insert(all.end(), arguments.begin(), arguments.end());
  std::vector<char*> argv;
  for (auto& argument : all) argv.push_back(argument.data());
  argv.push_back(nullptr);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("cannot start a worker: ") + std::strerror(errno));
  if (pid == 0) {
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    attnsweep::restore_default_signals_for_exec();
    if (getppid() != parent) _exit(127);  // the parent died before the line above
    // dup2 clears close-on-exec on the copy: only these three reach the worker.
    if (streams.input_fd >= 0) dup2(streams.input_fd, STDIN_FILENO);
    if (streams.output_fd >= 0) dup2(streams.output_fd, STDOUT_FILENO);
    if (streams.error_fd >= 0) dup2(streams.error_fd, STDERR_FILENO);
    execv(executable.c_str(), argv.data());
    _exit(127);
  }
  setpgid(pid, pid);
  return pid;
}

std::string describe_worker_exit(int status) {
  if (WIFSIGNALED(status)) {
    const int signal = WTERMSIG(status);
    return "worker killed by signal " + std::to_string(signal) + " (" + strsignal(signal) + ")";
  }
  return "worker exited with code " + std::to_string(WEXITSTATUS(status)) + " without storing the case";
}

namespace {

// The run's config and plan as the run stored them: never the file again,
// which may have changed, or been a pipe that is now empty.
struct StoredSweep {
  Config config;
  Plan plan;
  std::string op_libraries;  // runs.op_libraries: the builds the run measures

  const Case& case_at(int plan_index) const {
    if (plan_index < 0 || plan_index >= static_cast<int>(plan.cases.size())) {
      throw BadInputError("plan index " + std::to_string(plan_index) + " is not in the plan");
    }
    return plan.cases[static_cast<std::size_t>(plan_index)];
  }
};

StoredSweep load_stored_sweep(const std::string& db_path, std::int64_t run_id, const std::string& config_sha256) {
  const auto run = storage::RunReader(db_path).run(run_id);
  if (!run) throw BadInputError(db_path + ": no run " + std::to_string(run_id));
  if (sha256_hex(run->config_yaml) != config_sha256) {
    throw BadInputError("run " + std::to_string(run_id) + "'s stored config is not the one this worker was "
                        "started for; not measuring it");
  }
  Config config = parse_config(run->config_yaml, run->config_path.empty() ? "the run's config" : run->config_path);
  Plan plan = make_plan(config);
  return {std::move(config), std::move(plan), run->op_libraries};
}

// Whether the op libraries this worker loads are the run's builds (issue 55,
// item 9): loaded first, then their files compared with the identities the
// parent took before the run hashed them (op_library_watch.hpp), so a rebuild
// before this worker's dlopen is seen. If not, answers `refused` and the parent
// stops the run; nothing is measured.
bool loads_the_runs_libraries(const StoredSweep& sweep, const std::string& identities) {
  if (identities.empty() || sweep.config.op_libraries.empty()) return true;
  for (const auto& [name, spec] : sweep.config.op_libraries) load_op_library_variant(spec);
  OpLibraryWatch watch(sweep.config.op_libraries, identities);
  watch.expect(sweep.op_libraries);
  try {
    watch.check();
  } catch (const std::runtime_error& changed) {
    std::cout << kWorkerAnswer << "refused\t" << changed.what() << std::endl;
    return false;
  }
  return true;
}

// "stored <plan index>\t<status>\t<one-line result>[\t<warning>]...", or
// "kept ..." when the run held the case already (an earlier holder's, which is kept).
void answer_stored(const Case& c, const CaseResult& result, bool newly_stored) {
  std::string warnings;
  for (const auto& warning : result.warnings) warnings += "\t" + warning;
  std::cout << kWorkerAnswer << (newly_stored ? "stored " : "kept ") << c.plan_index << "\t"
            << to_string(result.status) << "\t" << report::one_line_result(c, result) << warnings << std::endl;
}

}  // namespace

WorkerAnswer parse_worker_answer(const std::string& line) {
  const std::string prefix = kWorkerAnswer;
  WorkerAnswer answer;
  if (line.rfind(prefix, 0) != 0) return answer;
  std::istringstream words(line.substr(prefix.size()));
  std::string kind;
  words >> kind;
  if (kind == "ready") {
    answer.kind = WorkerAnswer::Kind::ready;
    words >> answer.gpu_uuid;
    if (answer.gpu_uuid == "-") answer.gpu_uuid.clear();
  } else if (kind == "retiring") {
    answer.kind = WorkerAnswer::Kind::retiring;
  } else if (kind == "refused") {
    answer.kind = WorkerAnswer::Kind::refused;
    answer.reason = line.substr(std::min(line.size(), prefix.size() + kind.size() + 1));
  } else if (kind == "stored" || kind == "kept") {
    answer.kind = WorkerAnswer::Kind::stored;
    std::vector<std::string> fields;
    std::string rest = line.substr(std::min(line.size(), prefix.size() + kind.size() + 1));
    for (std::size_t tab; (tab = rest.find('\t')) != std::string::npos; rest.erase(0, tab + 1)) {
      fields.push_back(rest.substr(0, tab));
    }
    fields.push_back(rest);
    StoredCase& stored = answer.stored;
    stored.status = parse_case_status(fields.size() > 1 ? fields[1] : "").value_or(CaseStatus::error);
    if (fields.size() > 2) stored.result_line = fields[2];
    stored.warnings.assign(fields.begin() + std::min<std::size_t>(fields.size(), 3), fields.end());
    stored.kept_earlier = kind == "kept";
  }
  return answer;
}

void measure_and_store_case(const WorkerRequest& request) {
  const StoredSweep sweep = load_stored_sweep(request.db_path, request.run_id, request.config_sha256);
  const Case& c = sweep.case_at(request.plan_index);
  if (!loads_the_runs_libraries(sweep, request.op_library_identities)) return;
  CaseRunner runner(request.device, sweep.config.measure, sweep.config.seed);
  const CaseResult result = runner.run(c, request.trace_path);
  // The parent checked the database at open; a worker skips the quick_check.
  // False: the case is stored already (by a process that held the run before):
  // that one is kept, and this worker's job is done.
  answer_stored(c, result, storage::Store(request.db_path, storage::Store::Open::existing_without_quick_check)
                               .add_case(request.run_id, c, result)
                               .has_value());
}

void serve_cases(const ServeRequest& request) {
  const StoredSweep sweep = load_stored_sweep(request.db_path, request.run_id, request.config_sha256);
  if (!loads_the_runs_libraries(sweep, request.op_library_identities)) return;
  const Device device = resolve_device(request.device);
  storage::Store store(request.db_path, storage::Store::Open::existing_without_quick_check);
  storage::RunDevice record{collect_environment(device), std::nullopt, std::nullopt};
  if (device.is_cuda() && request.measure_ceilings) {
    const DeviceCeilings ceilings = measure_ceilings(device);
    record.ceiling_bf16_tflops = ceilings.bf16_tflops;
    record.ceiling_copy_gbps = ceilings.copy_gbps;
  }
  store.add_run_device(request.run_id, record);
  std::cout << kWorkerAnswer << "ready " << (record.environment.gpu_uuid.empty() ? "-" : record.environment.gpu_uuid)
            << std::endl;
  CaseRunner runner(device, sweep.config.measure, sweep.config.seed);
  for (std::string line; std::getline(std::cin, line);) {
    const auto tab = line.find('\t');
    const Case& c = sweep.case_at(std::stoi(line.substr(0, tab)));
    const CaseResult result = runner.run(c, tab == std::string::npos ? "" : line.substr(tab + 1));
    answer_stored(c, result, store.add_case(request.run_id, c, result).has_value());  // an earlier holder's is kept
    if (result.device_unusable) {  // the parent starts a fresh worker for the next case
      std::cout << kWorkerAnswer << "retiring" << std::endl;
      return;
    }
  }
}

std::string device_probe_json(const Device& requested_device) {
  const Device device = resolve_device(requested_device);
  nlohmann::json out = environment_to_json(collect_environment(device));
  out["memory_bytes"] = device_memory_bytes(device);
  return out.dump();
}

DeviceProbe probe_device_in_worker(const Device& requested_device) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("cannot start the device probe: " + std::string(std::strerror(errno)));
  pid_t pid = -1;
  try {
    pid = start_worker_process({"worker", "--probe", "--device", requested_device.to_string()}, {-1, fds[1], fds[1]});
  } catch (...) {
    close(fds[0]);
    close(fds[1]);
    throw;
  }
  close(fds[1]);
  std::string output;
  std::array<char, 4096> buffer{};
  for (;;) {
    const ssize_t got = read(fds[0], buffer.data(), buffer.size());
    if (got > 0) {
      output.append(buffer.data(), static_cast<std::size_t>(got));
    } else if (got == 0 || errno != EINTR) {
      break;
    }
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  // The JSON is the last line; anything before it is the libraries' own chatter.
  const auto start = output.rfind("\n{");
  const std::string last = start == std::string::npos ? output : output.substr(start + 1);
  if (code == kExitBadInput) throw BadInputError(output.substr(0, output.find_last_not_of("\n") + 1));
  const auto json = nlohmann::json::parse(last, nullptr, /*allow_exceptions=*/false);
  if (code != 0 || !json.is_object()) throw std::runtime_error("the device probe failed: " + output);
  DeviceProbe probe;
  probe.environment = environment_from_json(json);
  probe.memory_bytes = json.value("memory_bytes", 0.0);
  return probe;
}

}  // namespace attnsweep::execute
