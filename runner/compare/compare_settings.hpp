#pragma once
// The knobs of compare's verdicts in one place (docs/compare.md says why each
// has its value): compare, nightly's window and history all judge with the same
// settings, so a threshold given on the command line means one thing everywhere.
#include <cstddef>
#include <vector>

#include "runner/common/case_rules.hpp"
#include "runner/common/identities.hpp"
#include "runner/compare/case_key.hpp"
#include "runner/compare/kernel_differences.hpp"

namespace attnsweep::compare {

struct CompareSettings {
  // A change of the median time under this share is SAME (--threshold 5 = 0.05).
  double threshold = 0.05;
  // ...and so is one under this many microseconds (--min-change-us): between
  // processes, kernels under 30 us moved by up to 1.2 us on the H200 with
  // nothing changed (docs/compare.md, "Noise between runs").
  double min_change_us = 2.0;
  // FASTER or SLOWER also needs this quantile of the kept samples to move
  // beyond the threshold in the same direction as the median: the whole
  // distribution shifted, not only the mix of fast and slow samples.
  double shift_quantile = 0.10;
  // Significance level of the two-sided Mann-Whitney U test for FASTER or SLOWER.
  double alpha = 0.001;
  // Fewer kept eager samples than this on either side: AMBIGUOUS.
  std::size_t min_kept_samples = 5;
  // Power- or thermal-cap shares further apart than this mark a time verdict:
  // reported, not counted as a regression or an improvement.
  double cap_share_difference = 0.2;
  // A candidate beyond tolerance whose baseline was beyond it too regresses
  // when its rel_error grew by more than this factor.
  double numerics_worse_factor = 2;
  // rel_error tolerances per dtype (docs/compare.md says why).
  double bf16_tolerance = 1.6e-2, fp16_tolerance = 2e-3, fp32_tolerance = 1e-4;
  // What the kernel-level differences of a changed case list (kernel_differences.hpp).
  KernelDifferenceSettings kernels;
  // Energy per pass (cases.energy_j) further apart than this share is a note,
  // never a regression or an improvement: NVML's energy counter steps every
  // 100 ms on the H200; aligned windows repeat to about 1%, and a window's
  // length and the GPU's state move a figure by more (docs/compare.md).
  double energy_change = 0.10;
  // DRAM bytes per pass (hardware counters, issue 39) further apart than this share: a note
  // beside the time's verdict, never counted (what a pass moves explains a time, it is none).
  double bytes_change = 0.10;
  // Per-case rules (a nightly config's `nightly.rules`; docs/reproducibility.md,
  // "Per-case rules"): the first rule matching a case gives its threshold, or
  // says it is ignored. Empty for compare.
  std::vector<CaseRule> rules;

  double tolerance(Dtype dtype) const;
  // The first rule matching `key`, or null.
  const CaseRule* rule_for(const CaseKey& key) const;
  // These settings with the threshold of the rule matching `key`, if it gives one.
  CompareSettings for_case(const CaseKey& key) const;
};

}  // namespace attnsweep::compare
