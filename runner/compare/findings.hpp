#pragma once
// A finding is compare's unit of news about one case (docs/compare.md, the
// table of checks): what it is about, whether it counts, and its values as
// text. Every check makes them, every report prints them, and the nightly's
// exit code and history's changed nights count them by severity.
#include <string>
#include <vector>

namespace attnsweep::compare {

// What a finding is about, and whether it counts.
enum class Check { status, counts, backend, numerics, time, energy, validity, dram_bytes };
enum class Severity { regression, improvement, info };  // info: reported, never counted
const char* to_string(Check check);        // status, counts, backend, numerics, time, energy, validity, dram_bytes
const std::vector<Check>& checks();        // in declaration order
const char* to_string(Severity severity);  // regression, improvement, info

struct Finding {
  Check check = Check::status;
  Severity severity = Severity::info;
  std::string field;                // the column: status, kernels_per_forward, sdpa_backend, rel_error, time
  std::string baseline, candidate;  // the two values as text
  std::string detail;               // one sentence for a reader
};

}  // namespace attnsweep::compare
