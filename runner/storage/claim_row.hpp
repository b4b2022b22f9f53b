#pragma once
// A published figure as the run stores it (the claims table, issue 37;
// docs/config.md "Claims"): read from a claims file, matched to the run's case
// at plan_index or not (why_unmatched). Written and read through claim_columns.
#include <optional>
#include <string>

namespace attnsweep::storage {

struct ClaimRow {
  std::string claims_file, name;
  std::string source_title, source_repository, source_path, source_commit, source_url, source_where;
  std::string claimed_gpu, claimed_software, note;
  std::string variant, case_label;
  std::optional<double> claimed_tflops, claimed_time_us;
  std::optional<int> plan_index;
  std::string unmatched_reason;  // empty when matched
};

}  // namespace attnsweep::storage
