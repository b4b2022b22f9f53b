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
// known: ..." when `flavor` is not in `flavors`; `where_from` (when given)
// follows the list in parentheses, saying whose list it is.
void check_flavor(const std::string& flavor, const std::vector<std::string>& flavors,
                  const std::string& where_from = "");

// The GPUs of a flavor, by its name: 0 for cpu-*, N for a name ending in xN
// (h200x2, a10g-largex4, rtx-pro-6000x8; l4x1 and l40sx1 are one GPU), else 1
// (t4-small, a10g-large, a100-large, h200, rtx-pro-6000).
int flavor_gpu_count(const std::string& flavor);

}  // namespace attnsweep::jobs
