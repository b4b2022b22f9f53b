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
  const double n = static_cast<double>(samples.size());
  if (samples.size() >= 6 && stats.median > 0) {
    // Ranks (1-based) of the interval's ends: n/2 -+ 1.96 sqrt(n)/2, the normal
    // approximation of the binomial (Conover, Practical Nonparametric Statistics).
    const double half = 1.96 * std::sqrt(n) / 2;
    const auto low = static_cast<std::size_t>(std::max(1.0, std::floor(n / 2 - half)));
    const auto high = static_cast<std::size_t>(std::min(n, std::ceil(n / 2 + half + 1)));
    stats.median_ci_rel = (samples[high - 1] - samples[low - 1]) / 2 / stats.median;
  }
  if (samples.size() > 1) {
    double squares = 0;
    for (double value : samples) squares += (value - stats.mean) * (value - stats.mean);
    stats.stdev = std::sqrt(squares / static_cast<double>(samples.size() - 1));
  }
  return stats;
}

}  // namespace attnsweep
