#include "runner/device/environment_facts.hpp"

#include <stdexcept>
#include <type_traits>

namespace attnsweep {
namespace {

template <typename T>
bool is_unknown(UnknownWhen when, const EnvironmentInfo& info, const T& value) {
  switch (when) {
    case UnknownWhen::never: return false;
    case UnknownWhen::without_clock: return !(info.sm_clock_start_mhz > 0);
    case UnknownWhen::empty:
      if constexpr (std::is_same_v<T, std::string>) return value.empty();
      break;
    case UnknownWhen::not_positive:
      if constexpr (std::is_arithmetic_v<T>) return !(value > 0);  // NaN too
      break;
    case UnknownWhen::negative:
      if constexpr (std::is_arithmetic_v<T>) return !(value >= 0);
      break;
  }
  return false;
}

template <typename T>
nlohmann::json to_json_value(const T& value) {
  if constexpr (std::is_same_v<T, Device>) {
    return value.to_string();
  } else {
    return value;
  }
}

template <typename T>
T from_json_value(const char* name, const nlohmann::json& json) {
  try {
    if constexpr (std::is_same_v<T, Device>) {
      const auto parsed = Device::try_parse(json.get<std::string>());
      if (!parsed) throw std::runtime_error("unknown device " + json.dump());
      return *parsed;
    } else {
      return json.get<T>();
    }
  } catch (const std::exception& error) {
    throw std::runtime_error(std::string("environment fact ") + name + ": " + error.what());
  }
}

template <typename T>
EnvironmentFact fact(const char* name, T EnvironmentInfo::*member, UnknownWhen unknown_when, unsigned stored_in) {
  return {name, unknown_when, stored_in,
          [member, unknown_when](const EnvironmentInfo& info) {
            const T& value = info.*member;
            return is_unknown(unknown_when, info, value) ? nlohmann::json() : to_json_value(value);
          },
          [name, member](EnvironmentInfo& info, const nlohmann::json& json) {
            info.*member = json.is_null() ? EnvironmentInfo{}.*member : from_json_value<T>(name, json);
          }};
}

}  // namespace

const std::vector<EnvironmentFact>& environment_facts() {
  using E = EnvironmentInfo;
  using U = UnknownWhen;
  static const std::vector<EnvironmentFact> facts = {
      fact("device", &E::device, U::never, kInBoth),
      fact("device_name", &E::device_name, U::empty, kInBoth),
      fact("torch_version", &E::torch_version, U::empty, kInBoth),
      fact("cuda_version", &E::cuda_version, U::empty, kInBoth),
      fact("cuda_runtime_version", &E::cuda_runtime_version, U::empty, kNotStored),
      fact("cudnn_version", &E::cudnn_version, U::empty, kInBoth),
      fact("driver_version", &E::driver_version, U::empty, kInBoth),
      fact("hostname", &E::hostname, U::empty, kInBoth),
      fact("sm_count", &E::sm_count, U::not_positive, kInBoth),
      fact("device_memory_bytes", &E::device_memory_bytes, U::not_positive, kInBoth),
      fact("l2_cache_bytes", &E::l2_cache_bytes, U::not_positive, kInBoth),
      fact("sm_clock_max_mhz", &E::sm_clock_max_mhz, U::not_positive, kInBoth),
      fact("gpu_uuid", &E::gpu_uuid, U::empty, kInRunDevices),
      fact("cuda_device_count", &E::cuda_device_count, U::never, kNotStored),
      fact("container_image", &E::container_image, U::empty, kInRuns),
      fact("power_limit_w", &E::power_limit_w, U::not_positive, kInBoth),
      fact("sm_clock_start_mhz", &E::sm_clock_start_mhz, U::not_positive, kInBoth),
      fact("mem_clock_start_mhz", &E::mem_clock_start_mhz, U::not_positive, kInBoth),
      fact("temperature_start_c", &E::temperature_start_c, U::not_positive, kInBoth),
      fact("clock_event_reasons_start", &E::clock_event_reasons_start, U::without_clock, kInBoth),
      fact("other_processes_start", &E::other_processes_start, U::negative, kInBoth),
      fact("gpu_utilization_start_pct", &E::gpu_utilization_start_pct, U::negative, kInBoth),
      fact("env_vars", &E::env_vars, U::never, kInBoth),
  };
  return facts;
}

nlohmann::json environment_to_json(const EnvironmentInfo& environment) {
  nlohmann::json out = nlohmann::json::object();
  for (const EnvironmentFact& f : environment_facts()) out[f.name] = f.get(environment);
  return out;
}

EnvironmentInfo environment_from_json(const nlohmann::json& json) {
  EnvironmentInfo environment;
  for (const EnvironmentFact& f : environment_facts()) {
    const auto found = json.find(f.name);
    if (found != json.end()) f.set(environment, *found);
  }
  return environment;
}

}  // namespace attnsweep
