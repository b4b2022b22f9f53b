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
#include <iostream>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

#include "runner/common/errors.hpp"
#include "runner/common/interrupt.hpp"
#include "runner/common/log.hpp"
#include "runner/common/text.hpp"
#include "runner/execute/worker.hpp"
#include "runner/measure/failed_result.hpp"

namespace attnsweep::execute {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kStartAttempts = 2;
constexpr auto kKeepAlive = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(kKeepAliveSeconds));  // a worker that dies before it is ready twice in a row: give up

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

}  // namespace

// Named, not anonymous: WorkerPool::Impl, which has external linkage, holds
// these (GCC's -Wsubobject-linkage where this file is compiled in a batch).
namespace pool_parts {

// One device and the worker process serving it.
struct Slot {
  Device device;
  pid_t pid = -1;
  int to_worker = -1;    // a serving worker's stdin: one case per line
  int from_worker = -1;  // its stdout: answers
  std::string partial;   // bytes of an answer not ended by a newline yet
  bool ready = false;
  bool retiring = false;           // answered `retiring`: it ends after its last case, takes no more
  bool given_up = false;           // its worker could not start kStartAttempts times in a row
  bool ceilings_measured = false;  // by an earlier worker of this device
  int failed_starts = 0;
  std::string gpu_uuid;
  std::deque<QueuedCase> unit;        // cases of its current unit not handed out yet
  std::optional<QueuedCase> running;  // the case in flight
  Clock::time_point started;          // of the case in flight

  bool alive() const { return pid > 0; }
};

// Writing to a worker that has died must not kill the sweep with SIGPIPE.
class IgnoreBrokenPipes {
 public:
  IgnoreBrokenPipes() { previous_ = ::signal(SIGPIPE, SIG_IGN); }
  ~IgnoreBrokenPipes() { ::signal(SIGPIPE, previous_); }
  IgnoreBrokenPipes(const IgnoreBrokenPipes&) = delete;
  IgnoreBrokenPipes& operator=(const IgnoreBrokenPipes&) = delete;

 private:
  void (*previous_)(int);
};

}  // namespace pool_parts
using pool_parts::IgnoreBrokenPipes;
using pool_parts::Slot;

class WorkerPool::Impl {
 public:
  explicit Impl(PoolRequest request) : request_(std::move(request)) {
    for (const Device& device : request_.devices) {
      slots_.emplace_back();
      slots_.back().device = device;
    }
  }

  ~Impl() {
    for (Slot& slot : slots_) kill_worker(slot);
  }

  void begin(CaseQueue queue) {
    queue_ = std::move(queue);
    if (request_.serving) {
      for (Slot& slot : slots_) {
        if (has_work(slot)) start_serving(slot);
      }
    }
    next_keep_alive_ = Clock::now() + kKeepAlive;
  }

  CaseEvent next() {
    for (;;) {
      if (!events_.empty()) {
        CaseEvent event = std::move(events_.front());
        events_.pop_front();
        return event;
      }
      if (interrupt_requested()) return {CaseEvent::Kind::interrupted};
      for (Slot& slot : slots_) hand_out(slot);
      if (!events_.empty()) continue;
      if (std::none_of(slots_.begin(), slots_.end(), [](const Slot& slot) { return slot.alive(); })) {
        return {CaseEvent::Kind::done};
      }
      wait_for_answers();
      enforce_timeouts();
      if (events_.empty() && Clock::now() >= next_keep_alive_) {
        next_keep_alive_ += kKeepAlive;
        return {CaseEvent::Kind::waiting};
      }
    }
  }

 private:
  // Events name the device only when there are devices to tell apart (--gpus).
  std::string where(const Slot& slot) const { return request_.serving ? slot.device.to_string() : ""; }

  bool has_work(const Slot& slot) const { return !slot.given_up && (!slot.unit.empty() || !queue_.empty()); }

  // The slot's next case: from its unit, else from the queue's next unit.
  std::optional<QueuedCase> take_case(Slot& slot) {
    if (slot.unit.empty() && !queue_.empty()) {
      slot.unit.assign(queue_.front().begin(), queue_.front().end());
      queue_.pop_front();
    }
    if (slot.unit.empty()) return std::nullopt;
    QueuedCase next = slot.unit.front();
    slot.unit.pop_front();
    return next;
  }

  void start(Slot& slot, const std::vector<std::string>& arguments, bool with_input) {
    if (request_.before_worker_start) request_.before_worker_start();
    int input[2] = {-1, -1}, output[2];
    if (with_input && pipe2(input, O_CLOEXEC) != 0) {
      throw std::runtime_error(std::string("cannot start a worker: ") + std::strerror(errno));
    }
    if (pipe2(output, O_CLOEXEC) != 0) {
      for (int& fd : input) close_fd(fd);
      throw std::runtime_error(std::string("cannot start a worker: ") + std::strerror(errno));
    }
    try {
      slot.pid = start_worker_process(arguments, {input[0], output[1], -1});
    } catch (...) {
      for (int fd : {input[0], input[1], output[0], output[1]}) {
        if (fd >= 0) ::close(fd);
      }
      throw;
    }
    close_fd(input[0]);
    ::close(output[1]);
    slot.to_worker = input[1];
    slot.from_worker = output[0];
    slot.partial.clear();
    slot.ready = false;
    slot.retiring = false;
  }

  void start_serving(Slot& slot) {
    std::vector<std::string> arguments = {"--log-level", "warn", "worker", "--serve",
                                          "--config-sha256", request_.config_sha256,
                                          "--db", request_.db_path,
                                          "--run-id", std::to_string(request_.run_id),
                                          "--device", slot.device.to_string()};
    if (slot.ceilings_measured) arguments.push_back("--no-ceilings");
    with_library_identities(arguments);
    start(slot, arguments, /*with_input=*/true);
  }

  // --isolate on one device: a worker started for this one case, which runs from its start.
  void start_for_case(Slot& slot, const QueuedCase& queued) {
    std::vector<std::string> arguments = {"worker",
                                          "--config-sha256", request_.config_sha256,
                                          "--db", request_.db_path,
                                          "--run-id", std::to_string(request_.run_id),
                                          "--plan-index", std::to_string(queued.c->plan_index),
                                          "--device", slot.device.to_string()};
    if (!queued.trace_path.empty()) {
      arguments.push_back("--trace");
      arguments.push_back(queued.trace_path);
    }
    with_library_identities(arguments);
    start(slot, arguments, /*with_input=*/false);
    slot.ready = true;  // it needs no case handed to it: it ending early costs its case, not a start
  }

  void with_library_identities(std::vector<std::string>& arguments) const {
    if (request_.op_library_identities.empty()) return;
    arguments.push_back("--op-library-identities");
    arguments.push_back(request_.op_library_identities);
  }

  void restart_if_work(Slot& slot) {
    if (request_.serving && has_work(slot)) start_serving(slot);
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

  void case_started(Slot& slot, const QueuedCase& queued) {
    slot.running = queued;
    slot.started = Clock::now();
    events_.push_back({CaseEvent::Kind::started, queued.c->plan_index, where(slot)});
  }

  // Gives an idle, ready worker its next case, or tells it there is none (end
  // of its stdin); on one device with --isolate, starts a worker for the next case.
  void hand_out(Slot& slot) {
    if (!request_.serving) {
      if (slot.alive() || slot.given_up) return;
      if (const auto queued = take_case(slot)) {
        start_for_case(slot, *queued);
        case_started(slot, *queued);
      }
      return;
    }
    if (!slot.alive() || !slot.ready || slot.retiring || slot.running || slot.to_worker < 0) return;
    const auto queued = take_case(slot);
    if (!queued) {
      close_fd(slot.to_worker);  // the worker ends
      return;
    }
    const std::string line = std::to_string(queued->c->plan_index) + "\t" + queued->trace_path + "\n";
    case_started(slot, *queued);
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
    const WorkerAnswer answer = parse_worker_answer(line);
    switch (answer.kind) {
      case WorkerAnswer::Kind::other:
        // The libraries' own output on the worker's stdout: a serving worker's
        // to stderr, a case worker's where it went before it had a pipe.
        (request_.serving ? std::cerr : std::cout) << line << "\n";
        return;
      case WorkerAnswer::Kind::ready:
        slot.gpu_uuid = answer.gpu_uuid;
        slot.ready = true;
        slot.ceilings_measured = true;
        slot.failed_starts = 0;
        return;
      case WorkerAnswer::Kind::refused:  // an op library rebuilt since the run began: the run stops
        throw std::runtime_error(answer.reason);
      case WorkerAnswer::Kind::retiring:  // its CUDA context is unusable: a fresh worker takes over at its end
        slot.retiring = true;
        close_fd(slot.to_worker);
        return;
      case WorkerAnswer::Kind::stored: break;
    }
    if (!slot.running) return;
    CaseEvent event{CaseEvent::Kind::finished, slot.running->c->plan_index, where(slot)};
    event.outcome.kind = CaseOutcome::Kind::stored;
    event.outcome.stored = answer.stored;
    slot.running.reset();
    events_.push_back(std::move(event));
  }

  // End of the worker's stdout: it exited. A case in flight comes back crashed.
  void worker_ended(Slot& slot) {
    int status = 0;
    while (waitpid(slot.pid, &status, 0) < 0 && errno == EINTR) {
    }
    slot.pid = -1;
    close_fd(slot.to_worker);
    close_fd(slot.from_worker);
    if (slot.running) {
      failed(slot, CaseStatus::crashed, describe_worker_exit(status));
    } else if (!slot.ready && ++slot.failed_starts >= kStartAttempts) {
      give_up(slot, describe_worker_exit(status));
      return;
    }
    restart_if_work(slot);
  }

  // A device whose worker cannot start: its unit goes back to the queue for
  // the other devices; with none left, the sweep stops.
  void give_up(Slot& slot, const std::string& why) {
    slot.given_up = true;
    if (!slot.unit.empty()) {
      queue_.push_front({slot.unit.begin(), slot.unit.end()});
      slot.unit.clear();
    }
    const bool others = std::any_of(slots_.begin(), slots_.end(), [](const Slot& s) { return !s.given_up; });
    const std::string device = slot.device.to_string();
    if (!others) {
      throw std::runtime_error("the worker for " + device + " could not start " + std::to_string(kStartAttempts) +
                               " times (" + why + "); see its messages above");
    }
    log::error("the worker for " + device + " could not start " + std::to_string(kStartAttempts) + " times (" + why +
               "); the other devices go on without it");
    for (Slot& other : slots_) {
      if (!other.alive()) restart_if_work(other);  // idle ones that had ended for lack of work
    }
  }

  void enforce_timeouts() {
    for (Slot& slot : slots_) {
      if (!slot.running) continue;
      const double elapsed = std::chrono::duration<double>(Clock::now() - slot.started).count();
      if (elapsed <= request_.case_timeout_s) continue;
      kill_worker(slot);
      failed(slot, CaseStatus::timeout, "worker ran longer than measure.case_timeout_s = " +
                                            text::fixed(request_.case_timeout_s, 1) + " s and was killed");
      restart_if_work(slot);
    }
  }

  // The case in flight ended without its worker's word: the sweep stores it as `status`.
  void failed(Slot& slot, CaseStatus status, const std::string& why) {
    const Case& c = *slot.running->c;
    slot.running.reset();
    CaseEvent event{CaseEvent::Kind::finished, c.plan_index, where(slot)};
    event.outcome.result = failed_result(c, slot.device, status, why);
    event.outcome.result.gpu_uuid = slot.gpu_uuid;
    events_.push_back(std::move(event));
  }

  PoolRequest request_;
  IgnoreBrokenPipes ignore_broken_pipes_;
  CaseQueue queue_;
  std::vector<Slot> slots_;
  std::deque<CaseEvent> events_;  // happened, not reported yet
  Clock::time_point next_keep_alive_;
};

WorkerPool::WorkerPool(PoolRequest request) : impl_(std::make_unique<Impl>(std::move(request))) {}
WorkerPool::~WorkerPool() = default;
void WorkerPool::begin(CaseQueue queue) { impl_->begin(std::move(queue)); }
CaseEvent WorkerPool::next() { return impl_->next(); }

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
