#include "runner/execute/fingerprint.hpp"

#include <nlohmann/json.hpp>

#include "git_sha.hpp"
#include "runner/device/device.hpp"
#include "runner/device/environment.hpp"
#include "runner/device/nvml.hpp"
#include "version.hpp"

namespace attnsweep::execute {

std::string environment_fingerprint_json(const Device& device) {
  const EnvironmentInfo e = collect_environment(resolve_device(device));
  const auto positive_or_null = [](double value) { return value > 0 ? nlohmann::json(value) : nlohmann::json(); };
  const auto text_or_null = [](const std::string& text) { return text.empty() ? nlohmann::json() : nlohmann::json(text); };
  nlohmann::json out;
  out["attnsweep_version"] = kVersion;
  out["git_sha"] = kGitSha;
  out["device"] = e.device.to_string();
  out["device_name"] = e.device_name;
  out["gpu_uuid"] = text_or_null(e.gpu_uuid);
  out["hostname"] = e.hostname;
  out["torch_version"] = e.torch_version;
  out["cuda_version"] = text_or_null(e.cuda_version);
  out["cuda_runtime_version"] = text_or_null(e.cuda_runtime_version);
  out["cudnn_version"] = text_or_null(e.cudnn_version);
  out["driver_version"] = text_or_null(e.driver_version);
  out["container_image"] = text_or_null(e.container_image);
  out["sm_count"] = positive_or_null(e.sm_count);
  out["device_memory_bytes"] = positive_or_null(static_cast<double>(e.device_memory_bytes));
  out["l2_cache_bytes"] = positive_or_null(static_cast<double>(e.l2_cache_bytes));
  out["sm_clock_max_mhz"] = positive_or_null(e.sm_clock_max_mhz);
  out["power_limit_w"] = positive_or_null(e.power_limit_w);
  out["sm_clock_start_mhz"] = positive_or_null(e.sm_clock_start_mhz);
  out["mem_clock_start_mhz"] = positive_or_null(e.mem_clock_start_mhz);
  out["temperature_start_c"] = positive_or_null(e.temperature_start_c);
  if (e.sm_clock_start_mhz > 0) {
    out["clock_event_reasons_start"] = e.clock_event_reasons_start;
    out["clock_event_reasons_start_names"] = nvml::reasons::names(e.clock_event_reasons_start);
  } else {
    out["clock_event_reasons_start"] = nullptr;
    out["clock_event_reasons_start_names"] = nlohmann::json::array();
  }
  out["cuda_device_count"] = e.cuda_device_count;
  out["env_vars"] = e.env_vars;
  // An environment variable's value need not be UTF-8: such bytes become U+FFFD
  // rather than failing the command.
  return out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace attnsweep::execute
