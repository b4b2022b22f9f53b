#include "runner/execute/fingerprint.hpp"

#include <nlohmann/json.hpp>

#include "git_sha.hpp"
#include "runner/device/device.hpp"
#include "runner/device/environment.hpp"
#include "runner/device/environment_facts.hpp"
#include "runner/device/nvml.hpp"
#include "version.hpp"

namespace attnsweep::execute {

std::string environment_fingerprint_json(const Device& device) {
  const EnvironmentInfo e = collect_environment(resolve_device(device));
  nlohmann::json out;
  for (const EnvironmentFact& fact : environment_facts()) {
    nlohmann::json value = fact.get(e);
    // The GPU's sizes, counts and clocks have always printed as JSON reals
    // (132.0): kept so that the fingerprint's output does not change.
    if (fact.unknown_when == UnknownWhen::not_positive && value.is_number_integer()) value = value.get<double>();
    out[fact.name] = std::move(value);
  }
  out["attnsweep_version"] = kVersion;
  out["git_sha"] = kGitSha;
  out["clock_event_reasons_start_names"] = out["clock_event_reasons_start"].is_null()
                                               ? nlohmann::json::array()
                                               : nlohmann::json(nvml::reasons::names(e.clock_event_reasons_start));
  // An environment variable's value need not be UTF-8: such bytes become U+FFFD
  // rather than failing the command.
  return out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace attnsweep::execute
