#include "runner/jobs/flavors.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <regex>

#include "runner/common/errors.hpp"
#include "runner/common/text.hpp"
#include "runner/report/escaping.hpp"

namespace attnsweep::jobs {

const std::vector<std::string>& known_flavors() {
  static const std::vector<std::string> flavors = {
      "cpu-basic",      "cpu-upgrade",    "cpu-performance", "cpu-xl",     "t4-small",     "t4-medium",
      "l4x1",           "l4x4",           "l40sx1",          "l40sx4",     "l40sx8",       "a10g-small",
      "a10g-large",     "a10g-largex2",   "a10g-largex4",    "a100-large", "a100x4",       "a100x8",
      "h200",           "h200x2",         "h200x4",          "h200x8",     "rtx-pro-6000", "rtx-pro-6000x2",
      "rtx-pro-6000x4", "rtx-pro-6000x8"};
  return flavors;
}

std::vector<std::string> flavors_from_hardware_json(const std::string& output) {
  std::vector<std::string> names;
  const nlohmann::json parsed = nlohmann::json::parse(output, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_array()) return names;
  for (const auto& item : parsed) {
    if (item.is_object() && item.contains("name") && item["name"].is_string()) {
      names.push_back(item["name"].get<std::string>());
    }
  }
  return names;
}

void check_flavor(const std::string& flavor, const std::vector<std::string>& flavors, const std::string& where_from) {
  if (std::find(flavors.begin(), flavors.end(), flavor) != flavors.end()) return;
  const std::string near = text::nearest(flavor, flavors);
  throw BadInputError("--flavor: unknown flavor '" + report::terminal_safe(flavor) + "'" + (near.empty() ? "" : " (did you mean " + near + "?)") +
                      "; known: " + text::join(flavors, ", ") + (where_from.empty() ? "" : " (" + where_from + ")"));
}

int flavor_gpu_count(const std::string& flavor) {
  if (flavor.rfind("cpu-", 0) == 0) return 0;
  // "x" and the count at the end: "rtx-pro-6000" has none (its x is not followed by digits to the end).
  static const std::regex count_suffix("x([1-9][0-9]{0,2})$");
  std::smatch match;
  if (std::regex_search(flavor, match, count_suffix)) return std::stoi(match[1].str());
  return 1;
}

}  // namespace attnsweep::jobs
