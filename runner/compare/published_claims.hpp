#pragma once
// A run's claims (issue 37; the claims table, docs/config.md "Claims") each
// beside what the run measured: the ratio, the case's validity, and the
// differences that could explain a gap (GPU model, clocks and power cap seen,
// software versions against the claim's). Read by `attnsweep report` and
// `compare`; LibTorch-free.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runner/report/table.hpp"
#include "runner/storage/run_reader.hpp"

namespace attnsweep::compare {

// Within this share of the claim either way: reproduced.
inline constexpr double kClaimReproducedShare = 0.05;

// A stored claim beside what the run measured of it (storage::ClaimResult), and what compare makes of it.
struct ClaimLine : storage::ClaimResult {
  // "reproduced (within 5%)", "below the claim", "above the claim", or why there is no ratio.
  std::string verdict;
  // What differs between the claim's conditions and the run's: one short phrase each.
  std::vector<std::string> differences;
};

// Every claim of the run, in the order stored (the claims files' order).
std::vector<ClaimLine> read_claim_lines(const storage::RunReader& reader, std::int64_t run_id);

// claim, measured, ratio, verdict, validity, differences: the report's and compare's table.
report::Table claims_table(const std::vector<ClaimLine>& lines);

}  // namespace attnsweep::compare
