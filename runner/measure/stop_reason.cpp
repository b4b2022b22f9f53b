#include "runner/measure/stop_reason.hpp"

#include <cstddef>

namespace attnsweep {

const std::vector<std::string>& stop_reason_names() {
  static const std::vector<std::string> names = {"target_rel_stdev", "noise_converged", "max_case_seconds",
                                                 "max_samples"};
  return names;
}

const char* to_string(StopReason reason) { return stop_reason_names().at(static_cast<std::size_t>(reason)).c_str(); }

std::optional<StopReason> parse_stop_reason(const std::string& text) {
  const auto& names = stop_reason_names();
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] == text) return static_cast<StopReason>(i);
  }
  return std::nullopt;
}

}  // namespace attnsweep
