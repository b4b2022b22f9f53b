#pragma once
// The hardware counters a config may ask for (measure.counters, issue 39): their
// names, shared by the config reader and the counter pass (runner/measure/counters).
#include <optional>
#include <string>
#include <vector>

namespace attnsweep {

enum class Counter { dram_bytes, l2_hit_rate, sm_throughput, tensor_pipe };

// The names a config writes, in the order of the enum.
const std::vector<std::string>& counter_names();
std::optional<Counter> parse_counter(const std::string& name);
std::string to_string(Counter counter);

}  // namespace attnsweep
