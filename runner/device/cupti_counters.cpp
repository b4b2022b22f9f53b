#include "runner/device/cupti_counters.hpp"

#include <cxxabi.h>
#include <dlfcn.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#if ATTNSWEEP_HAVE_CUPTI
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_result.h>
#include <cupti_target.h>
#endif

namespace attnsweep::cupti {
namespace {

// CUPTI's mangled kernel names, demangled as Kineto names them.
std::string demangled(const std::string& name) {
  if (name.rfind("_Z", 0) != 0) return name;
  int status = 0;
  char* text = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  std::string out = status == 0 && text ? text : name;
  std::free(text);
  return out;
}

}  // namespace

#if !ATTNSWEEP_HAVE_CUPTI

bool compiled_in() { return false; }

struct RangeProfiler::State {
  std::vector<std::string> metrics;
};

std::unique_ptr<RangeProfiler> RangeProfiler::open(int, const std::vector<std::string>&, std::string& why_not) {
  why_not = "this build of attnsweep has no CUPTI range profiler (its headers were not found when it was built)";
  (void)demangled;
  return nullptr;
}

std::vector<std::string> RangeProfiler::known_metrics(int, const std::vector<std::string>&, std::string& why_not) {
  why_not = "this build of attnsweep has no CUPTI range profiler (its headers were not found when it was built)";
  return {};
}

RangeProfiler::RangeProfiler(std::unique_ptr<State> state) : state_(std::move(state)) {}
RangeProfiler::~RangeProfiler() = default;
CounterReadout RangeProfiler::collect(const std::function<void()>&, const std::function<void()>&,
                                      const std::function<void()>&, Replay) {
  return {{}, 0, "no CUPTI range profiler in this build"};
}
const std::vector<std::string>& RangeProfiler::metrics() const { return state_->metrics; }

#else

bool compiled_in() { return true; }

namespace {

// The CUPTI and driver functions this file calls, from the libraries already in the process.
struct Api {
  void* cupti = nullptr;
  std::string why_not;
  CUptiResult (*get_result_string)(CUptiResult, const char**) = nullptr;
  // cuptiSubscribe and cuptiUnsubscribe as cupti_callbacks.h declares them, without that header: it
  // needs the CUDA toolkit's crt/host_defines.h, which the torch wheel's include folder lacks.
  CUptiResult (*subscribe)(void** subscriber, void (*callback)(void*, int, std::uint32_t, const void*), void*) = nullptr;
  CUptiResult (*unsubscribe)(void* subscriber) = nullptr;
  CUptiResult (*profiler_initialize)(CUpti_Profiler_Initialize_Params*) = nullptr;
  CUptiResult (*device_chip_name)(CUpti_Device_GetChipName_Params*) = nullptr;
  CUptiResult (*counter_availability)(CUpti_Profiler_GetCounterAvailability_Params*) = nullptr;
  CUptiResult (*host_initialize)(CUpti_Profiler_Host_Initialize_Params*) = nullptr;
  CUptiResult (*host_deinitialize)(CUpti_Profiler_Host_Deinitialize_Params*) = nullptr;
  CUptiResult (*host_metric_properties)(CUpti_Profiler_Host_GetMetricProperties_Params*) = nullptr;
  CUptiResult (*host_add_metrics)(CUpti_Profiler_Host_ConfigAddMetrics_Params*) = nullptr;
  CUptiResult (*host_config_size)(CUpti_Profiler_Host_GetConfigImageSize_Params*) = nullptr;
  CUptiResult (*host_config_image)(CUpti_Profiler_Host_GetConfigImage_Params*) = nullptr;
  CUptiResult (*host_passes)(CUpti_Profiler_Host_GetNumOfPasses_Params*) = nullptr;
  CUptiResult (*host_evaluate)(CUpti_Profiler_Host_EvaluateToGpuValues_Params*) = nullptr;
  CUptiResult (*range_enable)(CUpti_RangeProfiler_Enable_Params*) = nullptr;
  CUptiResult (*range_disable)(CUpti_RangeProfiler_Disable_Params*) = nullptr;
  CUptiResult (*range_data_size)(CUpti_RangeProfiler_GetCounterDataSize_Params*) = nullptr;
  CUptiResult (*range_data_initialize)(CUpti_RangeProfiler_CounterDataImage_Initialize_Params*) = nullptr;
  CUptiResult (*range_set_config)(CUpti_RangeProfiler_SetConfig_Params*) = nullptr;
  CUptiResult (*range_start)(CUpti_RangeProfiler_Start_Params*) = nullptr;
  CUptiResult (*range_stop)(CUpti_RangeProfiler_Stop_Params*) = nullptr;
  CUptiResult (*range_decode)(CUpti_RangeProfiler_DecodeData_Params*) = nullptr;
  CUptiResult (*range_data_info)(CUpti_RangeProfiler_GetCounterDataInfo_Params*) = nullptr;
  CUptiResult (*range_info)(CUpti_RangeProfiler_CounterData_GetRangeInfo_Params*) = nullptr;
  int (*current_context)(CUcontext*) = nullptr;  // the driver's cuCtxGetCurrent
};

template <typename Function>
void bind(void* handle, const char* name, Function& function, std::string& missing) {
  function = reinterpret_cast<Function>(dlsym(handle, name));
  if (!function && missing.empty()) missing = name;
}

const Api& api() {
  static const Api loaded = [] {
    Api a;
    // LibTorch's own copy first (already loaded, the one Kineto uses), then any on the search path.
    for (const char* name : {"libcupti.so.13", "libcupti.so.12", "libcupti.so"}) {
      a.cupti = dlopen(name, RTLD_NOW | RTLD_NOLOAD);
      if (!a.cupti) a.cupti = dlopen(name, RTLD_NOW);
      if (a.cupti) break;
    }
    if (!a.cupti) {
      a.why_not = "libcupti (CUPTI) could not be loaded: not beside LibTorch nor on the library path";
      return a;
    }
    std::string missing;
    bind(a.cupti, "cuptiGetResultString", a.get_result_string, missing);
    bind(a.cupti, "cuptiSubscribe", a.subscribe, missing);
    bind(a.cupti, "cuptiUnsubscribe", a.unsubscribe, missing);
    bind(a.cupti, "cuptiProfilerInitialize", a.profiler_initialize, missing);
    bind(a.cupti, "cuptiDeviceGetChipName", a.device_chip_name, missing);
    bind(a.cupti, "cuptiProfilerGetCounterAvailability", a.counter_availability, missing);
    bind(a.cupti, "cuptiProfilerHostInitialize", a.host_initialize, missing);
    bind(a.cupti, "cuptiProfilerHostDeinitialize", a.host_deinitialize, missing);
    bind(a.cupti, "cuptiProfilerHostGetMetricProperties", a.host_metric_properties, missing);
    bind(a.cupti, "cuptiProfilerHostConfigAddMetrics", a.host_add_metrics, missing);
    bind(a.cupti, "cuptiProfilerHostGetConfigImageSize", a.host_config_size, missing);
    bind(a.cupti, "cuptiProfilerHostGetConfigImage", a.host_config_image, missing);
    bind(a.cupti, "cuptiProfilerHostGetNumOfPasses", a.host_passes, missing);
    bind(a.cupti, "cuptiProfilerHostEvaluateToGpuValues", a.host_evaluate, missing);
    bind(a.cupti, "cuptiRangeProfilerEnable", a.range_enable, missing);
    bind(a.cupti, "cuptiRangeProfilerDisable", a.range_disable, missing);
    bind(a.cupti, "cuptiRangeProfilerGetCounterDataSize", a.range_data_size, missing);
    bind(a.cupti, "cuptiRangeProfilerCounterDataImageInitialize", a.range_data_initialize, missing);
    bind(a.cupti, "cuptiRangeProfilerSetConfig", a.range_set_config, missing);
    bind(a.cupti, "cuptiRangeProfilerStart", a.range_start, missing);
    bind(a.cupti, "cuptiRangeProfilerStop", a.range_stop, missing);
    bind(a.cupti, "cuptiRangeProfilerDecodeData", a.range_decode, missing);
    bind(a.cupti, "cuptiRangeProfilerGetCounterDataInfo", a.range_data_info, missing);
    bind(a.cupti, "cuptiRangeProfilerCounterDataGetRangeInfo", a.range_info, missing);
    if (!missing.empty()) {
      a.why_not = "this libcupti has no " + missing + " (CUPTI's range profiler needs CUDA 12.6 or later)";
      return a;
    }
    void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!driver) driver = dlopen("libcuda.so.1", RTLD_NOW);
    if (driver) bind(driver, "cuCtxGetCurrent", a.current_context, missing);
    if (!a.current_context) a.why_not = "the CUDA driver (libcuda.so.1) could not be loaded";
    return a;
  }();
  return loaded;
}

// A CUPTI failure as one line: what was called and CUPTI's words. The admin-only
// restriction gets its own words, since it is the one users can do something about.
class Failure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

void check(CUptiResult result, const char* call) {
  if (result == CUPTI_SUCCESS) return;
  if (result == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES) {
    throw Failure("GPU performance counters are restricted to administrators on this machine "
                  "(NVreg_RestrictProfilingToAdminUsers=1): run as root, or set the driver's "
                  "RmProfilingAdminOnly/NVreg_RestrictProfilingToAdminUsers to 0");
  }
  const char* text = nullptr;
  if (api().get_result_string) api().get_result_string(result, &text);
  throw Failure(std::string(call) + " failed: " + (text ? text : "CUPTI error " + std::to_string(result)));
}

CUcontext current_context() {
  CUcontext context = nullptr;
  if (api().current_context(&context) != 0 || !context) throw Failure("no current CUDA context for the counter pass");
  return context;
}

void ignore_callback(void*, int, std::uint32_t, const void*) {}

// LibTorch's Kineto finalizes CUPTI after every profiling session (TEARDOWN_CUPTI=1,
// kineto_profiler.cpp), and the profiler API then answers CUPTI_ERROR_NOT_INITIALIZED
// (seen on the H100). CUPTI attaches again lazily on a call that needs it: a
// subscription, dropped at once, is such a call; then the initialization is asked again.
void initialize_profiler() {
  CUpti_Profiler_Initialize_Params params{CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
  CUptiResult result = api().profiler_initialize(&params);
  if (result == CUPTI_ERROR_NOT_INITIALIZED) {
    void* subscriber = nullptr;
    const CUptiResult subscribed = api().subscribe(&subscriber, ignore_callback, nullptr);
    if (subscribed == CUPTI_SUCCESS) api().unsubscribe(subscriber);
    CUpti_Profiler_Initialize_Params again{CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
    result = api().profiler_initialize(&again);
    if (result != CUPTI_SUCCESS) {
      const char* text = nullptr;
      api().get_result_string(subscribed, &text);
      check(result, ("cuptiProfilerInitialize (also after attaching CUPTI again, cuptiSubscribe: " +
                     std::string(text ? text : "?") + ")").c_str());
    }
    return;
  }
  check(result, "cuptiProfilerInitialize");
}

std::string chip_name(int cuda_index) {
  CUpti_Device_GetChipName_Params params{CUpti_Device_GetChipName_Params_STRUCT_SIZE};
  params.deviceIndex = static_cast<size_t>(cuda_index);
  check(api().device_chip_name(&params), "cuptiDeviceGetChipName");
  return params.pChipName ? params.pChipName : "";
}

std::vector<std::uint8_t> counter_availability(CUcontext context) {
  CUpti_Profiler_GetCounterAvailability_Params params{CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE};
  params.ctx = context;
  check(api().counter_availability(&params), "cuptiProfilerGetCounterAvailability");
  std::vector<std::uint8_t> image(params.counterAvailabilityImageSize);
  params.pCounterAvailabilityImage = image.data();
  check(api().counter_availability(&params), "cuptiProfilerGetCounterAvailability");
  return image;
}

// The host object: metric names, configuration images and evaluation.
struct Host {
  CUpti_Profiler_Host_Object* object = nullptr;
  std::string chip;
  std::vector<std::uint8_t> availability;

  Host(int cuda_index, CUcontext context) : chip(chip_name(cuda_index)), availability(counter_availability(context)) {
    CUpti_Profiler_Host_Initialize_Params params{CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
    params.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    params.pChipName = chip.c_str();
    params.pCounterAvailabilityImage = availability.data();
    check(api().host_initialize(&params), "cuptiProfilerHostInitialize");
    object = params.pHostObject;
  }
  ~Host() {
    CUpti_Profiler_Host_Deinitialize_Params params{CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
    params.pHostObject = object;
    api().host_deinitialize(&params);
  }
  Host(const Host&) = delete;
  Host& operator=(const Host&) = delete;

  bool knows(const std::string& metric) const {
    CUpti_Profiler_Host_GetMetricProperties_Params params{CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE};
    params.pHostObject = object;
    params.pMetricName = metric.c_str();
    return api().host_metric_properties(&params) == CUPTI_SUCCESS;
  }
};

std::vector<const char*> c_names(const std::vector<std::string>& names) {
  std::vector<const char*> out;
  for (const std::string& name : names) out.push_back(name.c_str());
  return out;
}

constexpr std::size_t kMaxRanges = 2048;  // kernel launches in one pass; more are dropped (and said)
constexpr int kMaxUserPasses = 64;          // runs of the pass CUPTI may ask for (8 for the four counters on an H100)

}  // namespace

struct RangeProfiler::State {
  std::vector<std::string> metrics;
  std::unique_ptr<Host> host;
  std::vector<std::uint8_t> config;
  int replay_passes = 0;  // the passes the configuration needs, as CUPTI says before any is run
};

std::vector<std::string> RangeProfiler::known_metrics(int cuda_index, const std::vector<std::string>& candidates,
                                                      std::string& why_not) {
  if (!api().why_not.empty()) {
    why_not = api().why_not;
    return {};
  }
  try {
    initialize_profiler();
    const Host host(cuda_index, current_context());
    std::vector<std::string> known;
    for (const std::string& metric : candidates) {
      if (host.knows(metric)) known.push_back(metric);
    }
    return known;
  } catch (const Failure& failure) {
    why_not = failure.what();
    return {};
  }
}

std::unique_ptr<RangeProfiler> RangeProfiler::open(int cuda_index, const std::vector<std::string>& metrics,
                                                   std::string& why_not) {
  if (!api().why_not.empty()) {
    why_not = api().why_not;
    return nullptr;
  }
  try {
    initialize_profiler();
    auto state = std::make_unique<State>();
    state->metrics = metrics;
    state->host = std::make_unique<Host>(cuda_index, current_context());
    std::vector<const char*> names = c_names(metrics);
    CUpti_Profiler_Host_ConfigAddMetrics_Params add{CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
    add.pHostObject = state->host->object;
    add.ppMetricNames = names.data();
    add.numMetrics = names.size();
    check(api().host_add_metrics(&add), "cuptiProfilerHostConfigAddMetrics");
    CUpti_Profiler_Host_GetConfigImageSize_Params size{CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE};
    size.pHostObject = state->host->object;
    check(api().host_config_size(&size), "cuptiProfilerHostGetConfigImageSize");
    state->config.resize(size.configImageSize);
    CUpti_Profiler_Host_GetConfigImage_Params image{CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
    image.pHostObject = state->host->object;
    image.pConfigImage = state->config.data();
    image.configImageSize = state->config.size();
    check(api().host_config_image(&image), "cuptiProfilerHostGetConfigImage");
    CUpti_Profiler_Host_GetNumOfPasses_Params passes{CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE};
    passes.pConfigImage = state->config.data();
    passes.configImageSize = state->config.size();
    check(api().host_passes(&passes), "cuptiProfilerHostGetNumOfPasses");
    state->replay_passes = static_cast<int>(passes.numOfPasses);
    return std::unique_ptr<RangeProfiler>(new RangeProfiler(std::move(state)));
  } catch (const Failure& failure) {
    why_not = failure.what();
    return nullptr;
  }
}

RangeProfiler::RangeProfiler(std::unique_ptr<State> state) : state_(std::move(state)) {}
RangeProfiler::~RangeProfiler() = default;

const std::vector<std::string>& RangeProfiler::metrics() const { return state_->metrics; }

CounterReadout RangeProfiler::collect(const std::function<void()>& prepare, const std::function<void()>& pass,
                                      const std::function<void()>& synchronize, Replay replay) {
  CounterReadout readout;
  CUpti_RangeProfiler_Object* profiler = nullptr;
  bool started = false;
  // The counter data image outlives the profiler that points into it (declared before the guard).
  std::vector<std::uint8_t> data;
  // Stopped and disabled on every way out, a throwing pass included: a profiler left
  // enabled would replay every later kernel.
  struct Disable {
    CUpti_RangeProfiler_Object*& profiler;
    bool& started;
    ~Disable() {
      if (!profiler) return;
      if (started) {
        CUpti_RangeProfiler_Stop_Params stop{CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
        stop.pRangeProfilerObject = profiler;
        api().range_stop(&stop);
      }
      CUpti_RangeProfiler_Disable_Params params{CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE};
      params.pRangeProfilerObject = profiler;
      api().range_disable(&params);
    }
  } disable{profiler, started};
  try {
    synchronize();
    initialize_profiler();  // again: the case's profiling session finalized CUPTI since open()
    CUpti_RangeProfiler_Enable_Params enable{CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE};
    enable.ctx = current_context();
    check(api().range_enable(&enable), "cuptiRangeProfilerEnable");
    profiler = enable.pRangeProfilerObject;

    std::vector<const char*> names = c_names(state_->metrics);
    CUpti_RangeProfiler_GetCounterDataSize_Params size{CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE};
    size.pRangeProfilerObject = profiler;
    size.pMetricNames = names.data();
    size.numMetrics = names.size();
    size.maxNumOfRanges = kMaxRanges;
    size.maxNumRangeTreeNodes = kMaxRanges;
    check(api().range_data_size(&size), "cuptiRangeProfilerGetCounterDataSize");
    data.assign(size.counterDataSize, 0);
    CUpti_RangeProfiler_CounterDataImage_Initialize_Params init{
        CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE};
    init.pRangeProfilerObject = profiler;
    init.pCounterData = data.data();
    init.counterDataSize = data.size();
    check(api().range_data_initialize(&init), "cuptiRangeProfilerCounterDataImageInitialize");

    CUpti_RangeProfiler_SetConfig_Params config{CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE};
    config.pRangeProfilerObject = profiler;
    config.pConfig = state_->config.data();
    config.configSize = state_->config.size();
    config.pCounterDataImage = data.data();
    config.counterDataImageSize = data.size();
    config.range = CUPTI_AutoRange;  // a range per kernel launch
    config.replayMode = replay == Replay::kernel ? CUPTI_KernelReplay : CUPTI_UserReplay;
    config.maxRangesPerPass = kMaxRanges;
    config.numNestingLevels = 1;
    config.minNestingLevel = 1;
    config.passIndex = 0;
    config.targetNestingLevel = 1;
    check(api().range_set_config(&config), "cuptiRangeProfilerSetConfig");

    // Kernel replay: one run, CUPTI replays each kernel (saving and restoring the memory it
    // writes), so the loop ends at the first stop. User replay: the whole pass again per pass of
    // the counters, each run prepared again.
    int passes = 0;
    for (bool all_submitted = false; !all_submitted;) {
      if (passes == kMaxUserPasses) {
        throw Failure("CUPTI asked for more than " + std::to_string(kMaxUserPasses) + " runs of the pass (its " +
                      "configuration said " + std::to_string(state_->replay_passes) + ")");
      }
      prepare();
      CUpti_RangeProfiler_Start_Params start{CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
      start.pRangeProfilerObject = profiler;
      check(api().range_start(&start), "cuptiRangeProfilerStart");
      started = true;
      pass();
      synchronize();
      CUpti_RangeProfiler_Stop_Params stop{CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
      stop.pRangeProfilerObject = profiler;
      started = false;
      check(api().range_stop(&stop), "cuptiRangeProfilerStop");
      ++passes;
      // Kernel replay: CUPTI replayed every kernel within this one run (as before user replay existed).
      all_submitted = replay == Replay::kernel || stop.isAllPassSubmitted != 0;
    }
    readout.replay_passes = replay == Replay::kernel ? state_->replay_passes : passes;
    CUpti_RangeProfiler_DecodeData_Params decode{CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE};
    decode.pRangeProfilerObject = profiler;
    check(api().range_decode(&decode), "cuptiRangeProfilerDecodeData");
    if (decode.numOfRangeDropped > 0) {
      throw Failure(std::to_string(decode.numOfRangeDropped) + " kernel launches of the pass were dropped (more than " +
                    std::to_string(kMaxRanges) + " in one pass)");
    }

    CUpti_RangeProfiler_GetCounterDataInfo_Params info{CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE};
    info.pCounterDataImage = data.data();
    info.counterDataImageSize = data.size();
    check(api().range_data_info(&info), "cuptiRangeProfilerGetCounterDataInfo");
    for (std::size_t range = 0; range < info.numTotalRanges; ++range) {
      KernelCounters kernel;
      CUpti_RangeProfiler_CounterData_GetRangeInfo_Params name{
          CUpti_RangeProfiler_CounterData_GetRangeInfo_Params_STRUCT_SIZE};
      name.pCounterDataImage = data.data();
      name.counterDataImageSize = data.size();
      name.rangeIndex = range;
      name.rangeDelimiter = "/";
      check(api().range_info(&name), "cuptiRangeProfilerCounterDataGetRangeInfo");
      kernel.name = demangled(name.rangeName ? name.rangeName : "");
      kernel.values.assign(names.size(), 0.0);
      CUpti_Profiler_Host_EvaluateToGpuValues_Params evaluate{CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE};
      evaluate.pHostObject = state_->host->object;
      evaluate.pCounterDataImage = data.data();
      evaluate.counterDataImageSize = data.size();
      evaluate.rangeIndex = range;
      evaluate.ppMetricNames = names.data();
      evaluate.numMetrics = names.size();
      evaluate.pMetricValues = kernel.values.data();
      check(api().host_evaluate(&evaluate), "cuptiProfilerHostEvaluateToGpuValues");
      readout.kernels.push_back(std::move(kernel));
    }
  } catch (const Failure& failure) {
    readout.kernels.clear();
    readout.why_not = failure.what();
  }
  return readout;
}

#endif

}  // namespace attnsweep::cupti
