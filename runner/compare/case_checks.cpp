#include "runner/compare/case_checks.hpp"

#include <cmath>
#include <utility>

#include "runner/common/numerics.hpp"
#include "runner/common/text.hpp"
#include "runner/compare/value_text.hpp"
#include "runner/measure/validity_reason.hpp"

namespace attnsweep::compare {
namespace {

using storage::CaseRow;

std::string as_text(const std::optional<int>& value) { return value ? std::to_string(*value) : ""; }

// One error of a case (the output's rel_error, or a backward pass's dq, dk or dv
// error) against its dtype's tolerance.
void check_error(const char* field, const std::optional<double>& a, const std::optional<double>& b,
                 const CompareSettings& settings, Dtype dtype, std::vector<Finding>& findings) {
  const double tolerance = settings.tolerance(dtype);
  const std::string limit = std::string(to_string(dtype)) + " tolerance " + scientific(tolerance);
  if (a && !b) {
    findings.push_back({Check::numerics, Severity::info, field, scientific(*a), "",
                        std::string("no ") + field + " now: not finite, or the accuracy check turned off"});
    return;
  }
  if (!a || !b) return;
  if (*b > tolerance && (*a <= tolerance || *b > settings.numerics_worse_factor * *a)) {
    const std::string detail = *a <= tolerance ? "beyond the " + limit
                                               : "beyond the " + limit + " and more than " +
                                                     number_text(settings.numerics_worse_factor) + "x the baseline's";
    findings.push_back({Check::numerics, Severity::regression, field, scientific(*a), scientific(*b), detail});
  } else if (*a > tolerance && *b <= tolerance) {
    findings.push_back({Check::numerics, Severity::improvement, field, scientific(*a), scientific(*b),
                        "within the " + limit + " now"});
  }
}

// An fp8 case's rel_error is mostly the quantisation's (4.9% for e4m3 at N(0, 1)
// inputs), the same on both sides for the same seed: a kernel whose own error
// doubled stays far inside the fp8 bound. rel_error_dequantized is the kernel's
// own error (against the dequantised inputs); it regresses when more than
// numerics_worse_factor times the baseline's and beyond the bf16 tolerance (a
// kernel that computes in bf16 after dequantising is judged as a bf16 kernel).
void check_kernel_error(const CaseRow& baseline, const CaseRow& candidate, const CompareSettings& settings,
                        std::vector<Finding>& findings) {
  const std::optional<double>& a = baseline.rel_error_dequantized;
  const std::optional<double>& b = candidate.rel_error_dequantized;
  if (a && !b) {
    findings.push_back({Check::numerics, Severity::info, "rel_error_dequantized", scientific(*a), "",
                        "no rel_error_dequantized now: not finite, or the accuracy check turned off"});
    return;
  }
  if (!a || !b) return;
  const double floor = settings.bf16_tolerance;
  if (*b > floor && *b > settings.numerics_worse_factor * *a) {
    findings.push_back({Check::numerics, Severity::regression, "rel_error_dequantized", scientific(*a), scientific(*b),
                        "the kernel's own error (against the dequantised inputs) is more than " +
                            number_text(settings.numerics_worse_factor) + "x the baseline's and beyond the bf16 tolerance " +
                            scientific(floor)});
  }
}

}  // namespace

void check_status(const CaseRow& baseline, const CaseRow& candidate, std::vector<Finding>& findings) {
  if (baseline.status == candidate.status) return;
  Finding finding{Check::status, Severity::info, "status", to_string(baseline.status), to_string(candidate.status), ""};
  const std::string why = candidate.error_message.empty() ? "" : ": " + text::one_line(candidate.error_message);
  if (baseline.status == CaseStatus::ok) {
    finding.severity = Severity::regression;
    finding.detail = std::string("ran in the baseline, ") + to_string(candidate.status) + " now" + why;
  } else if (candidate.status == CaseStatus::ok) {
    finding.severity = Severity::improvement;
    finding.detail = std::string("runs now, was ") + to_string(baseline.status);
  } else {
    finding.detail = std::string("still does not run") + why;
  }
  findings.push_back(std::move(finding));
}

void check_counts(const CaseRow& baseline, const CaseRow& candidate, std::vector<Finding>& findings) {
  const std::vector<std::pair<const char*, std::optional<int> CaseRow::*>> counts = {
      {"kernels_per_forward", &CaseRow::kernels_per_forward},
      {"memcpy_per_forward", &CaseRow::memcpy_per_forward},
      {"memset_per_forward", &CaseRow::memset_per_forward}};
  for (const auto& [name, member] : counts) {
    const std::optional<int>& a = baseline.*member;
    const std::optional<int>& b = candidate.*member;
    if (a == b) continue;
    if (a && b) {
      std::string detail = "launches per forward changed by " + std::string(*b > *a ? "+" : "") + std::to_string(*b - *a);
      if (baseline.counts_consistent == false || candidate.counts_consistent == false) {
        detail += " (counts never agreed between profiled forwards on one side)";
      }
      findings.push_back({Check::counts, Severity::regression, name, std::to_string(*a), std::to_string(*b), detail});
    } else {
      findings.push_back({Check::counts, Severity::info, name, as_text(a), as_text(b),
                          std::string("recorded on one side only")});
    }
  }
}

void check_backend(const CaseRow& baseline, const CaseRow& candidate, std::vector<Finding>& findings) {
  const std::pair<const char*, std::string CaseRow::*> backends[] = {
      {"sdpa_backend", &CaseRow::sdpa_backend}, {"sdpa_backend_backward", &CaseRow::sdpa_backend_backward}};
  for (const auto& [name, member] : backends) {
    const std::string& a = baseline.*member;
    const std::string& b = candidate.*member;
    if (a == b) continue;
    const bool both = !a.empty() && !b.empty();
    findings.push_back({Check::backend, both ? Severity::regression : Severity::info, name, a, b,
                        both ? "another backend ran (sdpa_auto's choice, or a fallback)" : "recorded on one side only"});
  }
}

void check_numerics(const CaseRow& baseline, const CaseRow& candidate, const CompareSettings& settings,
                    std::vector<Finding>& findings) {
  const bool backward = baseline.identity.pass != Pass::forward;
  const std::optional<double>& a = baseline.rel_error;
  // A finite output (or gradient) turning NaN or Inf is a regression whatever the time says.
  const bool nonfinite_now = candidate.numerics == to_string(NumericsVerdict::nonfinite);
  const bool finite_before = baseline.numerics == to_string(NumericsVerdict::ok) ||
                             baseline.numerics == to_string(NumericsVerdict::beyond_bound) ||
                             (!backward && a.has_value());
  if (nonfinite_now && finite_before) {
    findings.push_back({Check::numerics, Severity::regression, backward ? "output or gradient" : "output",
                        a ? "rel_error " + scientific(*a) : "finite", "NaN or Inf",
                        backward ? "the output or a gradient is not finite now" : "the output is not finite now"});
    return;
  }
  const Dtype dtype = baseline.identity.dtype;
  check_error("rel_error", a, candidate.rel_error, settings, dtype, findings);
  check_error("grad_rel_error_q", baseline.grad_rel_error_q, candidate.grad_rel_error_q, settings, dtype, findings);
  check_error("grad_rel_error_k", baseline.grad_rel_error_k, candidate.grad_rel_error_k, settings, dtype, findings);
  check_error("grad_rel_error_v", baseline.grad_rel_error_v, candidate.grad_rel_error_v, settings, dtype, findings);
  if (is_fp8(dtype)) check_kernel_error(baseline, candidate, settings, findings);
}

void check_validity(const CaseRow& baseline, const CaseRow& candidate, std::vector<Finding>& findings) {
  if (baseline.validity != "ok" || !candidate.suspect()) return;
  findings.push_back({Check::validity, Severity::info, "validity", "ok",
                      "suspect (" + text::join(candidate.validity_codes(), ", ") + ")",
                      format_reasons(candidate.validity_reasons)});
}

std::string suspect_reason(const CaseRow& baseline, const CaseRow& candidate) {
  const auto codes = [](const CaseRow& row) { return text::join(row.validity_codes(), ", "); };
  std::vector<std::string> sides;
  if (candidate.suspect()) sides.push_back("the candidate is suspect (" + codes(candidate) + ")");
  if (baseline.suspect()) sides.push_back("the baseline is suspect (" + codes(baseline) + ")");
  return text::join(sides, ", ");
}

EnergyComparison compare_energy(const CaseRow& baseline, const CaseRow& candidate) {
  EnergyComparison energy{baseline.energy_j, candidate.energy_j, baseline.energy_power_w, candidate.energy_power_w,
                          std::nullopt};
  if (energy.baseline_j && energy.candidate_j && *energy.baseline_j > 0) {
    energy.ratio = *energy.candidate_j / *energy.baseline_j;
  }
  return energy;
}

void check_energy(const CaseRow& baseline, const CaseRow& candidate, const EnergyComparison& energy,
                  const CompareSettings& settings, std::vector<Finding>& findings) {
  if (!energy.ratio || std::fabs(*energy.ratio - 1) <= settings.energy_change) return;
  if (baseline.other_processes.value_or(0) > 0 || candidate.other_processes.value_or(0) > 0) return;
  const auto joules = [](double value) { return text::fixed(value, value < 0.01 ? 5 : value < 1 ? 4 : 3) + " J"; };
  std::string detail = "energy per pass " + signed_percent(*energy.ratio);
  if (energy.baseline_power_w && energy.candidate_power_w) {
    detail += ", average power " + text::fixed(*energy.baseline_power_w, 0) + " -> " +
              text::fixed(*energy.candidate_power_w, 0) + " W";
  }
  detail += " (beyond " + percent(settings.energy_change) + "; informational: NVML's energy counter)";
  findings.push_back(
      {Check::energy, Severity::info, "energy_j", joules(*energy.baseline_j), joules(*energy.candidate_j), detail});
}

void check_dram_bytes(const CaseRow& baseline, const CaseRow& candidate, const CompareSettings& settings,
                      std::vector<Finding>& findings) {
  const auto moved = [](const CaseRow& row) -> std::optional<double> {
    if (!row.dram_read_bytes || !row.dram_write_bytes) return std::nullopt;
    return *row.dram_read_bytes + *row.dram_write_bytes;
  };
  const std::optional<double> before = moved(baseline), after = moved(candidate);
  if (!before || !after || *before <= 0) return;
  const double ratio = *after / *before;
  if (std::fabs(ratio - 1) <= settings.bytes_change) return;
  const auto megabytes = [](double bytes) { return text::fixed(bytes / 1e6, 2) + " MB"; };
  std::string detail = "DRAM bytes per pass " + signed_percent(ratio);
  const std::optional<double> t0 = baseline.derived.time_us_median, t1 = candidate.derived.time_us_median;
  if (t0 && t1 && *t0 > 0) detail += ", time " + signed_percent(*t1 / *t0);
  detail += " (beyond " + percent(settings.bytes_change) + "; informational: hardware counters, measure.counters)";
  findings.push_back({Check::dram_bytes, Severity::info, "dram_bytes", megabytes(*before), megabytes(*after), detail});
}

}  // namespace attnsweep::compare
