#include "runner/measure/validity_reason.hpp"

#include <cstddef>

#include "runner/common/enum_names.hpp"

namespace attnsweep {
namespace {

constexpr const char* kCodeSeparator = ": ";
constexpr const char* kReasonSeparator = "; ";

}  // namespace

const std::vector<std::string>& validity_code_names() {
  static const std::vector<std::string> names = {
      "shared_gpu",        "counts_inconsistent", "event_vs_kernels", "graph_kernel_count",
      "graph_output",      "throttled_samples",   "power_capped",     "thermal_capped",
      "few_samples",       "not_converged",       "level_shift",      "cooldown_exhausted"};
  return names;
}

const char* to_string(ValidityCode code) { return name_in(validity_code_names(), code).c_str(); }

std::optional<ValidityCode> parse_validity_code(const std::string& text) {
  return value_named<ValidityCode>(validity_code_names(), text);
}

std::string format_reason(const ValidityReason& reason) {
  return std::string(to_string(reason.code)) + kCodeSeparator + reason.detail;
}

std::string format_reasons(const std::vector<ValidityReason>& reasons) {
  std::string out;
  for (const auto& reason : reasons) out += (out.empty() ? "" : kReasonSeparator) + format_reason(reason);
  return out;
}

std::optional<std::vector<ValidityReason>> parse_reasons(const std::string& text) {
  std::vector<ValidityReason> reasons;
  const std::string separator = kReasonSeparator;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find(separator, start);
    if (end == std::string::npos) end = text.size();
    const std::string part = text.substr(start, end - start);
    const std::size_t colon = part.find(kCodeSeparator);
    if (colon == std::string::npos) return std::nullopt;
    const auto code = parse_validity_code(part.substr(0, colon));
    if (!code) return std::nullopt;
    reasons.push_back({*code, part.substr(colon + 2)});
    start = end + separator.size();
  }
  return reasons;
}

}  // namespace attnsweep
