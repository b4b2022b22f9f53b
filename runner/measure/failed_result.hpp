#pragma once
// The results a case starts from and ends with when it fails, made in one
// place for the case runner and the worker executor alike.
#include <string>

#include "runner/measure/case_result.hpp"

namespace attnsweep {

// What is known before anything runs: the device, FLOPs and fewest bytes.
CaseResult started_result(const Case& c, const Device& device);

// A case that failed (unsupported, oom, error, crashed, timeout): only the
// reason and what stays true (FLOPs, bytes, where the time went); partial
// measurements of a failed case would mislead.
CaseResult failed_result(const Case& c, const Device& device, CaseStatus status, const std::string& message,
                         const PhaseSeconds& phases = {});

}  // namespace attnsweep
