#pragma once
// The checks of one matched case that are not about its time (docs/compare.md,
// the table of checks): status, kernel counts, backend, numerics, validity and
// energy. Each reads the two stored rows only and adds its findings; the order
// they are called in is the order the reports list them.
#include <optional>
#include <string>
#include <vector>

#include "runner/compare/compare_settings.hpp"
#include "runner/compare/findings.hpp"
#include "runner/storage/run_reader.hpp"

namespace attnsweep::compare {

// A status that changed: a regression from ok, an improvement to ok, a note between failures.
void check_status(const storage::CaseRow& baseline, const storage::CaseRow& candidate, std::vector<Finding>& findings);
// Kernel, memcpy and memset counts per pass: exact, so any change regresses.
void check_counts(const storage::CaseRow& baseline, const storage::CaseRow& candidate, std::vector<Finding>& findings);
// The forward's backend and, for backward passes, the backward's (issue 23).
void check_backend(const storage::CaseRow& baseline, const storage::CaseRow& candidate, std::vector<Finding>& findings);
// rel_error and a backward's dq, dk and dv errors against the dtype's tolerance;
// an output or gradient that turned NaN or Inf.
void check_numerics(const storage::CaseRow& baseline, const storage::CaseRow& candidate,
                    const CompareSettings& settings, std::vector<Finding>& findings);
// A case that was ok and is suspect now is news in itself (a graph that lost
// its kernels, a GPU now capped): a note, never counted.
void check_validity(const storage::CaseRow& baseline, const storage::CaseRow& candidate, std::vector<Finding>& findings);

// Which side of a comparison is suspect, by its reasons' codes: "the candidate
// is suspect (power_capped, not_converged)"; both when both are; "" when neither.
std::string suspect_reason(const storage::CaseRow& baseline, const storage::CaseRow& candidate);

// The energy per pass of a case in both runs (cases.energy_j; empty where not
// measured), what the JSON output and the energy note are made of.
struct EnergyComparison {
  std::optional<double> baseline_j, candidate_j;              // joules per pass
  std::optional<double> baseline_power_w, candidate_power_w;  // average power in the window
  std::optional<double> ratio;                                // candidate_j / baseline_j, both measured
};

EnergyComparison compare_energy(const storage::CaseRow& baseline, const storage::CaseRow& candidate);

// Energy per pass further apart than settings.energy_change: a note, never
// counted (the counter is coarse; docs/compare.md). None where another process
// computed on the GPU on either side: the counter is the whole GPU's.
void check_energy(const storage::CaseRow& baseline, const storage::CaseRow& candidate, const EnergyComparison& energy,
                  const CompareSettings& settings, std::vector<Finding>& findings);

// DRAM bytes per pass (the counter pass's read + written, issue 39) further apart than
// settings.bytes_change, both read: a note with both sides and the time's ratio beside it.
void check_dram_bytes(const storage::CaseRow& baseline, const storage::CaseRow& candidate,
                      const CompareSettings& settings, std::vector<Finding>& findings);

}  // namespace attnsweep::compare
