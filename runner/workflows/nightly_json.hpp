#pragma once
// The night as one JSON object for CI jobs and dashboards (`nightly
// --summary-json FILE`; docs/reproducibility.md, "JSON summary", format
// "attnsweep-nightly/1"): the verdict and exit code, why the night is not a
// pass, every flagged case with its numbers and reasons, and compare's own JSON
// of the comparison (`compare --format json`, docs/compare.md).
#include <string>

#include "runner/workflows/night_verdict.hpp"
#include "runner/workflows/nightly.hpp"

namespace attnsweep::workflows {

inline constexpr const char* kNightlyJsonFormat = "attnsweep-nightly/1";

// `verdict` as the command ends: with exit_code raised for a summary or history
// that could not be written. Ends with a newline.
std::string render_nightly_json(const NightlyOutcome& outcome, const NightVerdict& verdict);

}  // namespace attnsweep::workflows
