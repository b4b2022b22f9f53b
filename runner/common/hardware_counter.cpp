#include "runner/common/hardware_counter.hpp"

#include <algorithm>

namespace attnsweep {

const std::vector<std::string>& counter_names() {
  static const std::vector<std::string> names{"dram_bytes", "l2_hit_rate", "sm_throughput", "tensor_pipe"};
  return names;
}

std::optional<Counter> parse_counter(const std::string& name) {
  const auto& names = counter_names();
  const auto it = std::find(names.begin(), names.end(), name);
  if (it == names.end()) return std::nullopt;
  return static_cast<Counter>(it - names.begin());
}

std::string to_string(Counter counter) { return counter_names().at(static_cast<std::size_t>(counter)); }

}  // namespace attnsweep
