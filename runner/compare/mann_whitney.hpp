#pragma once
// The two-sided Mann-Whitney U test (Wilcoxon rank-sum) on two sets of raw
// timing samples, as scipy.stats.mannwhitneyu(x, y) computes it by default:
// the exact null distribution when one side has at most 8 samples and no value
// is tied, else the normal approximation with the tie correction and the
// continuity correction. Distribution-free: it asks whether one side's samples
// tend to be larger than the other's, whatever the shape of the timings.
#include <vector>

namespace attnsweep::compare {

struct MannWhitneyResult {
  double u_statistic = 0;  // U of the first sample: pairs (x, y) with x > y, ties counting one half
  double p_value = 1;      // two-sided; 1 when either side is empty
  bool exact = false;      // from the exact distribution rather than the normal approximation
};

MannWhitneyResult mann_whitney_u(const std::vector<double>& x, const std::vector<double>& y);

// P(U >= u) for samples of sizes m and n without ties: the exact null
// distribution, counted as the coefficients of the Gaussian binomial (the
// partitions of U into at most min(m, n) parts of at most max(m, n) each) up to
// the middle of the distribution only, in O(min^2 max) steps and memory
// O(m n / 2); mann_whitney.cpp says why no precision is lost. For the tests.
double mann_whitney_exact_upper_tail(int m, int n, double u);

}  // namespace attnsweep::compare
