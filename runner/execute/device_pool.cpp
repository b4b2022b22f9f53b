#include "runner/execute/device_pool.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <map>
#include <iostream>
#include <optional>
#include <regex>
#include <sstream>

#include "runner/common/errors.hpp"
#include "runner/common/interrupt.hpp"
#include "runner/common/log.hpp"
#include "runner/common/text.hpp"
#include "runner/execute/trace_paths.hpp"
#include "runner/execute/worker.hpp"
#include "runner/measure/failed_result.hpp"
#include "runner/plan/shard.hpp"
#include "runner/report/case_line.hpp"

namespace attnsweep::execute {
namespace {

using Clock = std::chrono::steady_clock;

// A unit is split into single cases when it costs more than 1/(devices x 4) of
// the whole: the last units then keep every device busy to the end.
constexpr int kUnitsPerDevice = 4;
constexpr double kKeepAliveSeconds = 60;
constexpr int kStartAttempts = 2;  // a worker that dies before it is ready twice in a row: give up

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// One device and the worker process serving it.
struct Slot {
  Device device;
  pid_t pid = -1;
  int to_worker = -1;    // the worker's stdin: one case per line
  int from_worker = -1;  // its stdout: answers
  std::string partial;   // bytes of an answer not ended by a newline yet
  bool ready = false;
  bool retiring = false;           // answered `retiring`: it ends after its last case, takes no more
  bool given_up = false;           // its worker could not start kStartAttempts times in a row
  bool ceilings_measured = false;  // by an earlier worker of this device
  int failed_starts = 0;
  std::string gpu_uuid;
  std::deque<int> unit;        // cases of its current unit not handed out yet
  std::optional<int> running;  // the plan index in flight
  int position = 0;            // its position in the sweep, the i of "[i/N]"
  Clock::time_point started;   // of the case in flight

  bool alive() const { return pid > 0; }
};

std::string describe(const Slot& slot) { return slot.device.to_string(); }

class Pool {
 public:
  Pool(const Plan& plan, const MeasureSettings& measure, const std::set<int>& done, const PoolRequest& request,
       storage::Store& store, const PoolHooks& hooks)
      : plan_(plan), request_(request), store_(store), hooks_(hooks) {
    for (WorkUnit unit : work_units(plan, measure, static_cast<int>(request.devices.size()), kUnitsPerDevice)) {
      unit.plan_indexes.erase(std::remove_if(unit.plan_indexes.begin(), unit.plan_indexes.end(),
                                             [&](int index) { return done.count(index) > 0; }),
                              unit.plan_indexes.end());
      if (!unit.plan_indexes.empty()) queue_.push_back(std::move(unit));
    }
    for (const Case& c : plan.cases) {
      handed_out_ += done.count(c.plan_index) ? 1 : 0;
      cases_[c.plan_index] = &c;
    }
    for (const Device& device : request.devices) slots_.push_back(Slot{device});
  }

  ~Pool() {
    for (Slot& slot : slots_) kill_worker(slot);
  }

  bool run() {
    for (Slot& slot : slots_) {
      if (has_work(slot)) start(slot);
    }
    auto next_keep_alive = Clock::now() + std::chrono::duration<double>(kKeepAliveSeconds);
    for (;;) {
      if (interrupt_requested()) return false;
      for (Slot& slot : slots_) hand_out(slot);
      if (std::none_of(slots_.begin(), slots_.end(), [](const Slot& slot) { return slot.alive(); })) return true;
      wait_for_answers();
      enforce_timeouts();
      if (hooks_.keep_alive && Clock::now() >= next_keep_alive) {
        next_keep_alive += std::chrono::duration<double>(kKeepAliveSeconds);
        if (!hooks_.keep_alive()) return false;
      }
    }
  }

 private:
  // The plan may be a shard's: its cases are found by plan index, not position.
  const Case& case_at(int plan_index) const { return *cases_.at(plan_index); }

  // "[3/42] ": the position of the slot's case, which begins its log lines.
  std::string position_prefix(const Slot& slot) const {
    return "[" + std::to_string(slot.position) + "/" + std::to_string(plan_.cases.size()) + "] ";
  }

  bool has_work(const Slot& slot) const { return !slot.given_up && (!slot.unit.empty() || !queue_.empty()); }

  void start(Slot& slot) {
    int input[2], output[2];
    if (pipe2(input, O_CLOEXEC) != 0) throw std::runtime_error(std::string("cannot start a worker: ") + std::strerror(errno));
    if (pipe2(output, O_CLOEXEC) != 0) {
      ::close(input[0]);
      ::close(input[1]);
      throw std::runtime_error(std::string("cannot start a worker: ") + std::strerror(errno));
    }
    std::vector<std::string> arguments = {"--log-level", "warn", "worker", "--serve",
                                          "--config-sha256", request_.config_sha256,
                                          "--db", request_.db_path,
                                          "--run-id", std::to_string(request_.run_id),
                                          "--device", slot.device.to_string()};
    if (slot.ceilings_measured) arguments.push_back("--no-ceilings");
    try {
      slot.pid = start_worker_process(arguments, {input[0], output[1], -1});
    } catch (...) {
      for (int fd : {input[0], input[1], output[0], output[1]}) ::close(fd);
      throw;
    }
    ::close(input[0]);
    ::close(output[1]);
    slot.to_worker = input[1];
    slot.from_worker = output[0];
    slot.partial.clear();
    slot.ready = false;
    slot.retiring = false;
  }

  void kill_worker(Slot& slot) {
    if (!slot.alive()) return;
    ::kill(-slot.pid, SIGKILL);
    int status = 0;
    while (waitpid(slot.pid, &status, 0) < 0 && errno == EINTR) {
    }
    slot.pid = -1;
    close_fd(slot.to_worker);
    close_fd(slot.from_worker);
  }

  // Gives an idle, ready worker its next case, or tells it there is none (end of its stdin).
  void hand_out(Slot& slot) {
    if (!slot.alive() || !slot.ready || slot.retiring || slot.running || slot.to_worker < 0) return;
    if (slot.unit.empty() && !queue_.empty()) {
      slot.unit.assign(queue_.front().plan_indexes.begin(), queue_.front().plan_indexes.end());
      queue_.pop_front();
    }
    if (slot.unit.empty()) {
      close_fd(slot.to_worker);  // the worker ends
      return;
    }
    const Case& c = case_at(slot.unit.front());
    slot.unit.pop_front();
    const std::string line = std::to_string(c.plan_index) + "\t" + trace_file(request_.traces_dir, request_.run_id, c) + "\n";
    slot.running = c.plan_index;
    slot.started = Clock::now();
    const std::string label = c.label() + " on " + describe(slot);
    slot.position = hooks_.case_started ? hooks_.case_started(c.plan_index, label) : ++handed_out_;
    log::info(position_prefix(slot) + label);
    // A worker that died meanwhile shows as EPIPE here (SIGPIPE is ignored) and as end of file below.
    if (::write(slot.to_worker, line.data(), line.size()) != static_cast<ssize_t>(line.size())) close_fd(slot.to_worker);
    if (request_.isolate) close_fd(slot.to_worker);  // one case per worker process
  }

  void wait_for_answers() {
    std::vector<pollfd> fds;
    std::vector<Slot*> owners;
    for (Slot& slot : slots_) {
      if (slot.alive() && slot.from_worker >= 0) {
        fds.push_back({slot.from_worker, POLLIN, 0});
        owners.push_back(&slot);
      }
    }
    if (poll(fds.data(), fds.size(), 200) <= 0) return;
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      Slot& slot = *owners[i];
      char buffer[4096];
      const ssize_t got = ::read(slot.from_worker, buffer, sizeof buffer);
      if (got < 0 && errno == EINTR) continue;
      if (got > 0) {
        slot.partial.append(buffer, static_cast<std::size_t>(got));
        for (std::size_t end; (end = slot.partial.find('\n')) != std::string::npos;) {
          const std::string line = slot.partial.substr(0, end);
          slot.partial.erase(0, end + 1);
          answer(slot, line);
        }
      } else {
        worker_ended(slot);
      }
    }
  }

  void answer(Slot& slot, const std::string& line) {
    const std::string prefix = kWorkerAnswer;
    if (line.rfind(prefix, 0) != 0) {
      std::cerr << line << "\n";  // the libraries' own output on the worker's stdout
      return;
    }
    std::istringstream words(line.substr(prefix.size()));
    std::string kind;
    words >> kind;
    if (kind == "ready") {
      words >> slot.gpu_uuid;
      if (slot.gpu_uuid == "-") slot.gpu_uuid.clear();
      slot.ready = true;
      slot.ceilings_measured = true;
      slot.failed_starts = 0;
      return;
    }
    if (kind == "retiring") {  // its CUDA context is unusable: a fresh worker takes over at its end
      slot.retiring = true;
      close_fd(slot.to_worker);
      return;
    }
    if (kind != "stored") return;
    // "stored <plan index>\t<status>\t<one-line result>[\t<warning>]..."
    std::vector<std::string> fields;
    std::string rest = line.substr(prefix.size() + kind.size() + 1);
    for (std::size_t tab; (tab = rest.find('\t')) != std::string::npos; rest.erase(0, tab + 1)) {
      fields.push_back(rest.substr(0, tab));
    }
    fields.push_back(rest);
    const CaseStatus status = parse_case_status(fields.size() > 1 ? fields[1] : "").value_or(CaseStatus::error);
    const bool failed = status != CaseStatus::ok && status != CaseStatus::unsupported;  // a warning; else info
    if (fields.size() > 2) (failed ? log::warn : log::info)(position_prefix(slot) + fields[2] + " (" + describe(slot) + ")");
    for (std::size_t i = 3; i < fields.size(); ++i) log::warn("  " + fields[i]);
    const int plan_index = slot.running.value_or(-1);
    slot.running.reset();
    if (hooks_.case_finished && plan_index >= 0) hooks_.case_finished(plan_index, status);
    hooks_.after_case();
  }

  // End of the worker's stdout: it exited. A case in flight is stored as crashed.
  void worker_ended(Slot& slot) {
    int status = 0;
    while (waitpid(slot.pid, &status, 0) < 0 && errno == EINTR) {
    }
    slot.pid = -1;
    close_fd(slot.to_worker);
    close_fd(slot.from_worker);
    const bool was_ready = slot.ready;
    if (slot.running) {
      store_failure(slot, CaseStatus::crashed, describe_worker_exit(status));
    } else if (!was_ready && ++slot.failed_starts >= kStartAttempts) {
      give_up(slot, describe_worker_exit(status));
      return;
    }
    if (has_work(slot)) start(slot);
  }

  // A device whose worker cannot start: its unit goes back to the queue for
  // the other devices; with none left, the sweep stops.
  void give_up(Slot& slot, const std::string& why) {
    slot.given_up = true;
    if (!slot.unit.empty()) {
      WorkUnit rest{{slot.unit.begin(), slot.unit.end()}, 0};
      slot.unit.clear();
      queue_.push_front(std::move(rest));
    }
    const bool others = std::any_of(slots_.begin(), slots_.end(), [](const Slot& s) { return !s.given_up; });
    if (!others) {
      throw std::runtime_error("the worker for " + describe(slot) + " could not start " +
                               std::to_string(kStartAttempts) + " times (" + why + "); see its messages above");
    }
    log::error("the worker for " + describe(slot) + " could not start " + std::to_string(kStartAttempts) + " times (" +
               why + "); the other devices go on without it");
    for (Slot& other : slots_) {
      if (!other.alive() && has_work(other)) start(other);  // idle ones that had ended for lack of work
    }
  }

  void enforce_timeouts() {
    for (Slot& slot : slots_) {
      if (!slot.running) continue;
      const double elapsed = std::chrono::duration<double>(Clock::now() - slot.started).count();
      if (elapsed <= request_.case_timeout_s) continue;
      kill_worker(slot);
      store_failure(slot, CaseStatus::timeout, "worker ran longer than measure.case_timeout_s = " +
                                                   text::fixed(request_.case_timeout_s, 1) + " s and was killed");
      if (has_work(slot)) start(slot);
    }
  }

  void store_failure(Slot& slot, CaseStatus status, const std::string& why) {
    const Case& c = case_at(*slot.running);
    slot.running.reset();
    CaseResult result = failed_result(c, slot.device, status, why);
    result.gpu_uuid = slot.gpu_uuid;
    if (store_.add_case(request_.run_id, c, result)) {
      log::warn(position_prefix(slot) + report::one_line_result(c, result) + " (" + describe(slot) + ")");
    }
    if (hooks_.case_finished) hooks_.case_finished(c.plan_index, status);
    hooks_.after_case();
  }

  const Plan& plan_;
  const PoolRequest& request_;
  storage::Store& store_;
  const PoolHooks& hooks_;
  std::map<int, const Case*> cases_;  // by plan index
  std::deque<WorkUnit> queue_;
  std::vector<Slot> slots_;
  std::size_t handed_out_ = 0;
};

// Writing to a worker that has died must not kill the sweep with SIGPIPE.
class IgnoreBrokenPipes {
 public:
  IgnoreBrokenPipes() { previous_ = ::signal(SIGPIPE, SIG_IGN); }
  ~IgnoreBrokenPipes() { ::signal(SIGPIPE, previous_); }

 private:
  void (*previous_)(int);
};

}  // namespace

bool run_cases_on_devices(const Plan& plan, const MeasureSettings& measure, const std::set<int>& done,
                          const PoolRequest& request, storage::Store& store, const PoolHooks& hooks) {
  IgnoreBrokenPipes ignore;
  Pool pool(plan, measure, done, request, store, hooks);
  return pool.run();
}

std::vector<Device> parse_gpus(const std::string& text, int available) {
  std::vector<Device> devices;
  if (text == "all") {
    for (int i = 0; i < available; ++i) devices.push_back(Device::cuda(i));
    if (devices.empty()) throw BadInputError("--gpus all: this machine has no CUDA device");
    return devices;
  }
  if (!std::regex_match(text, std::regex("[0-9]{1,4}(,[0-9]{1,4})*"))) {
    throw BadInputError("--gpus: invalid value '" + text + "'; expected all, or GPU indexes like 0,1");
  }
  std::istringstream items(text);
  std::set<int> seen;
  for (std::string item; std::getline(items, item, ',');) {
    const int index = std::stoi(item);
    if (!seen.insert(index).second) throw BadInputError("--gpus: GPU " + item + " is listed twice");
    if (available == 0) throw BadInputError("--gpus: this machine has no CUDA device");
    if (index >= available) {
      throw BadInputError("--gpus: GPU " + item + " does not exist; this machine has " + std::to_string(available) +
                          " CUDA device" + (available == 1 ? "" : "s") + " (0 to " + std::to_string(available - 1) + ")");
    }
    devices.push_back(Device::cuda(index));
  }
  return devices;
}

}  // namespace attnsweep::execute
