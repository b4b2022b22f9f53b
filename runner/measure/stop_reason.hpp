#pragma once
// Why a case's sampling stopped (cases.stop_reason): typed in memory, so that
// validity and the printers compare values, not text; spelled only where it is
// stored or shown. A new stopping criterion adds its reason here.
#include <optional>
#include <string>
#include <vector>

namespace attnsweep {

// target_rel_stdev and noise_converged are the stdrel criterion's ends
// (stdrel_criterion.hpp), median_ci the graph replays' (median_interval_criterion.hpp);
// max_case_seconds and max_samples the caps every criterion runs under
// (stopping_rule.hpp). New reasons go last: the stored spellings keep their order.
enum class StopReason { target_rel_stdev, noise_converged, max_case_seconds, max_samples, median_ci };

// The stored spelling ("max_samples", ...).
const char* to_string(StopReason reason);
// Empty for a spelling no build wrote: the storage edge refuses it as damaged.
std::optional<StopReason> parse_stop_reason(const std::string& text);
// Every spelling, in declaration order.
const std::vector<std::string>& stop_reason_names();

// The sample or time cap ended the case, not the criterion.
inline bool is_cap(StopReason reason) {
  return reason == StopReason::max_samples || reason == StopReason::max_case_seconds;
}

}  // namespace attnsweep
