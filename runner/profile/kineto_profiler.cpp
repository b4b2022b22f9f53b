#include "runner/profile/kineto_profiler.hpp"

#include <ATen/Functions.h>
#include <ATen/record_function.h>
#include <ActivityType.h>  // from torch/include/kineto
#include <torch/csrc/autograd/profiler_kineto.h>

#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "runner/common/log.hpp"
#include "runner/device/device.hpp"
#include "runner/device/torch_device.hpp"

namespace attnsweep {
namespace {

namespace profiler = torch::autograd::profiler;

constexpr const char* kTeardown = "1";  // TEARDOWN_CUPTI's value for "finalize CUPTI after each session"
using torch::profiler::impl::ActivityType;
using torch::profiler::impl::ProfilerConfig;
using torch::profiler::impl::ProfilerState;

Activity activity_of(std::uint8_t raw) {
  switch (static_cast<libkineto::ActivityType>(raw)) {
    case libkineto::ActivityType::CPU_OP: return Activity::cpu_op;
    case libkineto::ActivityType::USER_ANNOTATION: return Activity::user_annotation;
    case libkineto::ActivityType::GPU_USER_ANNOTATION: return Activity::gpu_user_annotation;
    case libkineto::ActivityType::GPU_MEMCPY: return Activity::gpu_memcpy;
    case libkineto::ActivityType::GPU_MEMSET: return Activity::gpu_memset;
    case libkineto::ActivityType::CONCURRENT_KERNEL: return Activity::kernel;
    case libkineto::ActivityType::CUDA_RUNTIME: return Activity::cuda_runtime;
    case libkineto::ActivityType::CUDA_DRIVER: return Activity::cuda_driver;
    default: return Activity::other;
  }
}

ProfilerConfig make_config() {
  torch::profiler::impl::ExperimentalConfig experimental;
  experimental.expose_kineto_event_metadata = true;  // grid, block, registers (for later use)
  return ProfilerConfig(ProfilerState::KINETO, /*report_input_shapes=*/false, /*profile_memory=*/false,
                        /*with_stack=*/false, /*with_flops=*/false, /*with_modules=*/false, experimental);
}

// Why a file could not be written at `path`, from its folder: Kineto's save
// keeps the system's error to itself. Asked while a partial file still holds
// its blocks; empty when the folder shows no reason.
std::string write_problem(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  const std::string folder = parent.empty() ? "." : parent.string();
  if (::access(folder.c_str(), W_OK | X_OK) != 0) return std::strerror(errno);
  struct statvfs space {};
  const bool full = ::statvfs(folder.c_str(), &space) == 0 && (space.f_bavail == 0 || space.f_favail == 0);
  return full ? std::strerror(ENOSPC) : "";
}

}  // namespace

std::string check_trace_file(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code error;
  std::string problem;
  const auto size = fs::file_size(path, error);
  const std::string reason = write_problem(path);
  if (error) {
    problem = "trace not written to " + path + " (" + (reason.empty() ? error.message() : reason) + ")";
  } else {
    // A complete Chrome trace is one JSON object: its last non-blank character closes it.
    std::ifstream file(path, std::ios::binary);
    const std::uintmax_t tail = std::min<std::uintmax_t>(size, 256);
    std::string end(static_cast<std::size_t>(tail), '\0');
    file.seekg(-static_cast<std::streamoff>(tail), std::ios::end);
    file.read(end.data(), static_cast<std::streamsize>(tail));
    const auto last = end.find_last_not_of(" \t\r\n");
    if (size == 0 || !file || last == std::string::npos || end[last] != '}') {
      problem = "trace at " + path + " is incomplete (" + std::to_string(size) + " bytes; " +
                (reason.empty() ? "a full disk?" : reason) + "); removed";
    }
  }
  if (!problem.empty()) {
    // Nothing half-written is left to be mistaken for a trace.
    fs::remove(path, error);
    fs::remove(path + ".tmp", error);
  }
  return problem;
}

KinetoProfiler::KinetoProfiler(const Device& device) : device_(device), cuda_(device.is_cuda()) {
  // Without CUPTI's teardown after each profiling session, CUPTI stays attached
  // and every later CUDA call pays for its callbacks: on the H200 the host
  // dispatch of a cuDNN forward measured 17 us before the first profile and 43
  // us after it, and the sweep's host-side numbers for every case after the
  // first were 1.6 to 2x too high (docs/benchmarks.md). Kineto reads this when
  // a session ends; a value the user set is kept. Only for CUDA profiling: the
  // teardown completes inside the next CUDA call, and a CPU run on a GPU
  // machine makes none: a CLI test hung on the H200 until this was fixed, and
  // there a Python process that profiled only the CPU with TEARDOWN_CUPTI=1 did
  // not exit within 60 s. Even a user's TEARDOWN_CUPTI=1 is removed then.
  if (!cuda_) {
    // A CPU run needs nothing of CUPTI, yet on a machine without a GPU driver Kineto
    // prints "gpuGetDeviceCount failed with code 35" at every run's first profile.
    // Level 5 is above Kineto's ERROR (4): its messages are silenced for CPU runs
    // only, and a level the user set is kept.
    setenv("KINETO_LOG_LEVEL", "5", /*overwrite=*/0);
  }
  if (cuda_) {
    setenv("TEARDOWN_CUPTI", kTeardown, /*overwrite=*/0);
  } else if (const char* value = std::getenv("TEARDOWN_CUPTI"); value && std::string(value) == kTeardown) {
    unsetenv("TEARDOWN_CUPTI");
    log::warn("TEARDOWN_CUPTI=1 removed for this CPU run: with it Kineto waits for a CUDA call that a CPU run "
              "never makes, and on a GPU machine the process hangs (CPU profiling does not use CUPTI)");
  }
}

std::string KinetoProfiler::cupti_kept_by_user() {
  const char* value = std::getenv("TEARDOWN_CUPTI");
  return !value || std::string(value) == kTeardown ? "" : value;
}

void KinetoProfiler::complete_cupti_teardown() {
  // With TEARDOWN_CUPTI=1 Kineto finalizes CUPTI inside the callback of the
  // next kernel launch after a session. Left pending, that launch is someone
  // else's: the profiled forwards of the next session (the H200 saw the first
  // session after a warm-up record no kernels) or a timed sample. One tiny
  // kernel here has the teardown happen inside the profiler. (It does not cure
  // a hang at exit seen in a test process that profiles directly: 3 of 20 on
  // the H200 with the teardown on, 0 of 12 with TEARDOWN_CUPTI=0; see
  // tests/test_example_op.cpp.)
  at::empty({1}, at::TensorOptions().device(torch_device(device_))).fill_(0);
  synchronize_device(device_);
}

void KinetoProfiler::warm_up(const std::function<void()>& forward, const std::function<void()>& before) {
  profile(forward, 1, "", before);
}

std::vector<ProfiledEvent> KinetoProfiler::profile(const std::function<void()>& forward, int forwards,
                                                   const std::string& trace_path, const std::function<void()>& before,
                                                   const std::function<void()>& replay) {
  std::set<ActivityType> activities = {ActivityType::CPU};
  if (cuda_) activities.insert(ActivityType::CUDA);
  const ProfilerConfig config = make_config();
  profiler::prepareProfiler(config, activities);
  synchronize_device(device_);
  profiler::enableProfiler(config, activities);
  // The replays first: a captured backward reads what the forward before its
  // capture saved, which the first `before` of the eager passes frees.
  if (replay) {
    for (int i = 0; i < forwards; ++i) {
      const std::string label = replay_label(i);
      RECORD_USER_SCOPE(label);
      replay();
    }
    synchronize_device(device_);
  }
  for (int i = 0; i < forwards; ++i) {
    if (before) {
      before();
      synchronize_device(device_);
    }
    const std::string label = forward_label(i);
    RECORD_USER_SCOPE(label);
    forward();
  }
  synchronize_device(device_);
  std::unique_ptr<profiler::ProfilerResult> result = profiler::disableProfiler();
  if (cuda_) complete_cupti_teardown();
  last_trace_error_.clear();
  if (!trace_path.empty()) {
    result->save(trace_path);
    last_trace_error_ = check_trace_file(trace_path);
  }

  std::vector<ProfiledEvent> events;
  events.reserve(result->events().size());
  for (const auto& event : result->events()) {
    ProfiledEvent out;
    out.activity = activity_of(event.activityType());
    if (out.activity == Activity::other) continue;
    out.name = event.name();
    out.start_ns = event.startNs();
    out.end_ns = event.endNs();
    out.correlation_id = event.correlationId();
    out.thread = event.startThreadId();
    out.stream = event.deviceResourceId();
    if (out.activity == Activity::kernel) out.metadata_json = event.metadataJson();
    events.push_back(std::move(out));
  }
  return events;
}

}  // namespace attnsweep
