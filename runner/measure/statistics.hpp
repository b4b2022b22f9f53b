#pragma once
// Summary statistics of timing samples, computed in one place.
#include <cstddef>
#include <optional>
#include <vector>

namespace attnsweep {

struct SampleStatistics {
  int count = 0;
  double median = 0, p10 = 0, p90 = 0, min = 0, max = 0, mean = 0, stdev = 0;
  // Half-width of the distribution-free 95% confidence interval of the median
  // (the order statistics x(k) and x(n+1-k) of median_interval_low_rank),
  // relative to the median: how precisely the reported number is known. Empty
  // under 6 samples.
  std::optional<double> median_ci_rel;
  double rel_stdev() const { return mean > 0 ? stdev / mean : 0; }
};

// Percentiles by linear interpolation between order statistics (numpy's default);
// stdev is the sample standard deviation (n - 1).
SampleStatistics summarize(std::vector<double> samples);
double percentile_sorted(const std::vector<double>& sorted, double fraction);
// The 1-based rank k whose order statistics x(k), x(n+1-k) bound the median with
// at least 95% confidence (exact binomial); 0 when n is too small (n < 6).
std::size_t median_interval_low_rank(std::size_t n);
// SampleStatistics::median_ci_rel of samples already sorted (what the graph
// replays' stopping criterion asks while it samples).
std::optional<double> median_ci_rel_sorted(const std::vector<double>& sorted);

}  // namespace attnsweep
