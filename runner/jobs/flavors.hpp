#pragma once
// The hardware flavors of HF Jobs: the list `hf jobs hardware` prints where it
// answers, else the one known when this was written (huggingface_hub's
// JobHardware, kept in step with the Hub API there).
#include <string>
#include <vector>

namespace attnsweep::jobs {

// GPU and CPU flavors of huggingface_hub 1.28 (there is no "h100").
const std::vector<std::string>& known_flavors();

// The flavor names in the output of `hf jobs hardware --format json` (a JSON
// array of objects with "name"); empty when it is not that.
std::vector<std::string> flavors_from_hardware_json(const std::string& output);

// Throws BadInputError "--flavor: unknown flavor 'h100' (did you mean h200?);
// known: ..." when `flavor` is not in `flavors`.
void check_flavor(const std::string& flavor, const std::vector<std::string>& flavors);

}  // namespace attnsweep::jobs
