#include "runner/measure/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace attnsweep {

double percentile_sorted(const std::vector<double>& sorted, double fraction) {
  if (sorted.empty()) return 0;
  const double position = fraction * static_cast<double>(sorted.size() - 1);
  const auto lower = static_cast<std::size_t>(std::floor(position));
  const auto upper = std::min(lower + 1, sorted.size() - 1);
  const double weight = position - static_cast<double>(lower);
  return sorted[lower] + (sorted[upper] - sorted[lower]) * weight;
}

std::size_t median_interval_low_rank(std::size_t n) {
  // The median lies below the k-th smallest of n samples with probability
  // P(Binomial(n, 1/2) >= k); the interval [x(k), x(n+1-k)] misses it with
  // probability 2 P(B <= k-1). k is the largest rank that keeps that at or under
  // 5%. Exact, so small n get the narrowest interval that is still 95%.
  std::size_t k = 0;
  double below = 0;  // P(B <= k - 1), summed in log space (0.5^n underflows for n > 1074)
  const double nd = static_cast<double>(n), log_half_n = nd * std::log(0.5);
  for (std::size_t i = 0; i <= n / 2; ++i) {
    const double id = static_cast<double>(i);
    below += std::exp(std::lgamma(nd + 1) - std::lgamma(id + 1) - std::lgamma(nd - id + 1) + log_half_n);
    if (below > 0.025) break;
    k = i + 1;
  }
  return k;
}

std::optional<double> median_ci_rel_sorted(const std::vector<double>& sorted) {
  const std::size_t low = median_interval_low_rank(sorted.size());
  const double median = percentile_sorted(sorted, 0.5);
  if (low == 0 || median <= 0) return std::nullopt;
  const std::size_t high = sorted.size() + 1 - low;
  return (sorted[high - 1] - sorted[low - 1]) / 2 / median;
}

SampleStatistics summarize(std::vector<double> samples) {
  SampleStatistics stats;
  stats.count = static_cast<int>(samples.size());
  if (samples.empty()) return stats;
  std::sort(samples.begin(), samples.end());
  stats.min = samples.front();
  stats.max = samples.back();
  stats.median = percentile_sorted(samples, 0.5);
  stats.p10 = percentile_sorted(samples, 0.1);
  stats.p90 = percentile_sorted(samples, 0.9);
  stats.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(samples.size());
  stats.median_ci_rel = median_ci_rel_sorted(samples);
  if (samples.size() > 1) {
    double squares = 0;
    for (double value : samples) squares += (value - stats.mean) * (value - stats.mean);
    stats.stdev = std::sqrt(squares / static_cast<double>(samples.size() - 1));
  }
  return stats;
}

}  // namespace attnsweep
