#pragma once
// One reason a timed case is labelled suspect (docs/measurement.md, "Validity";
// the codes in docs/schema.md): a code that compare, nightly and the reports
// match on, and a detail for people. Typed in memory; only the storage edge
// spells it, as cases.validity_reasons' "code: detail; code: detail".
#include <optional>
#include <string>
#include <vector>

namespace attnsweep {

// In the order judge_validity looks; the spelling is the name.
enum class ValidityCode {
  shared_gpu,
  counts_inconsistent,
  event_vs_kernels,
  graph_kernel_count,
  graph_output,
  throttled_samples,
  power_capped,
  thermal_capped,
  few_samples,
  not_converged,
  level_shift,
  cooldown_exhausted,
};

struct ValidityReason {
  ValidityCode code;
  std::string detail;  // e.g. "2 other compute process(es) on the GPU during the case"

  bool operator==(const ValidityReason& other) const { return code == other.code && detail == other.detail; }
};

const char* to_string(ValidityCode code);
// Empty for a spelling no build wrote: the storage edge refuses it as damaged.
std::optional<ValidityCode> parse_validity_code(const std::string& text);
// Every code's spelling, in declaration order.
const std::vector<std::string>& validity_code_names();

// "code: detail"
std::string format_reason(const ValidityReason& reason);
// As stored in cases.validity_reasons: each format_reason joined by "; "; "" for none.
std::string format_reasons(const std::vector<ValidityReason>& reasons);
// The inverse of format_reasons: "" gives no reasons; empty when a part is not
// "code: detail" with a known code (a damaged value).
std::optional<std::vector<ValidityReason>> parse_reasons(const std::string& text);

}  // namespace attnsweep
