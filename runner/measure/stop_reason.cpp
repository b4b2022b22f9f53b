#include "runner/measure/stop_reason.hpp"

#include "runner/common/enum_names.hpp"

namespace attnsweep {

const std::vector<std::string>& stop_reason_names() {
  static const std::vector<std::string> names = {"target_rel_stdev", "noise_converged", "max_case_seconds",
                                                 "max_samples", "median_ci"};
  return names;
}

const char* to_string(StopReason reason) { return name_in(stop_reason_names(), reason).c_str(); }

std::optional<StopReason> parse_stop_reason(const std::string& text) {
  return value_named<StopReason>(stop_reason_names(), text);
}

}  // namespace attnsweep
