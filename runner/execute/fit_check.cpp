#include "runner/execute/fit_check.hpp"

#include "runner/common/errors.hpp"
#include "runner/common/text.hpp"
#include "runner/measure/flops.hpp"

namespace attnsweep::execute {

void check_cases_fit(const Plan& plan, const Device& device, double available_bytes, const std::string& config_path) {
  constexpr double kGiB = 1 << 30;
  for (const Case& c : plan.cases) {
    const double needed = forward_min_bytes(c.shape, c.dtype);
    if (needed > available_bytes) {
      throw ConfigError(config_path, c.where, "shapes",
                        "case " + c.label() + " needs " + text::fixed(needed / kGiB, 1) +
                            " GiB for q, k, v and the output alone; " + device.to_string() + " has " +
                            text::fixed(available_bytes / kGiB, 1) + " GiB. Use smaller shapes or exclude it");
    }
  }
}

}  // namespace attnsweep::execute
