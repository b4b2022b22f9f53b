#include "runner/compare/mann_whitney.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

namespace attnsweep::compare {
namespace {

// scipy's rule: the exact distribution only for a small side and no ties.
constexpr std::size_t kExactMaxSamples = 8;

}  // namespace

double mann_whitney_exact_upper_tail(int m, int n, double u) {
  if (m <= 0 || n <= 0) return 1;
  if (m > n) std::swap(m, n);  // U's distribution is symmetric in the two sizes
  const std::size_t top = static_cast<std::size_t>(m) * static_cast<std::size_t>(n);
  // counts[i][k]: arrangements of i x's and j y's with U = k, for the current j.
  std::vector<std::vector<double>> counts(static_cast<std::size_t>(m) + 1, std::vector<double>(top + 1, 0.0));
  for (auto& row : counts) row[0] = 1;  // j = 0: U is 0 whatever i is
  for (int j = 1; j <= n; ++j) {
    // The largest value is an x (above all j y's: U grows by j) or a y (U unchanged).
    for (int i = 1; i <= m; ++i) {
      std::vector<double>& row = counts[static_cast<std::size_t>(i)];
      const std::vector<double>& fewer_x = counts[static_cast<std::size_t>(i) - 1];
      const std::size_t highest = static_cast<std::size_t>(i) * static_cast<std::size_t>(j);
      for (std::size_t k = highest; k >= static_cast<std::size_t>(j); --k) row[k] += fewer_x[k - static_cast<std::size_t>(j)];
    }
  }
  const std::vector<double>& all = counts[static_cast<std::size_t>(m)];
  const double total = std::accumulate(all.begin(), all.end(), 0.0);
  const double from = std::ceil(u - 1e-9);
  double tail = 0;
  for (std::size_t k = from <= 0 ? 0 : static_cast<std::size_t>(from); k <= top; ++k) tail += all[k];
  return tail / total;
}

MannWhitneyResult mann_whitney_u(const std::vector<double>& x, const std::vector<double>& y) {
  MannWhitneyResult result;
  if (x.empty() || y.empty()) return result;
  const std::size_t n1 = x.size(), n2 = y.size(), n = n1 + n2;

  // Average ranks of the pooled samples, and the sizes of the groups of ties.
  std::vector<std::pair<double, bool>> pooled;  // value, from x
  pooled.reserve(n);
  for (double value : x) pooled.emplace_back(value, true);
  for (double value : y) pooled.emplace_back(value, false);
  std::sort(pooled.begin(), pooled.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  double rank_sum_x = 0, tie_term = 0;
  bool ties = false;
  for (std::size_t start = 0; start < n;) {
    std::size_t end = start + 1;
    while (end < n && pooled[end].first == pooled[start].first) ++end;
    const double group = static_cast<double>(end - start);
    const double average_rank = (static_cast<double>(start + 1) + static_cast<double>(end)) / 2;
    for (std::size_t i = start; i < end; ++i) rank_sum_x += pooled[i].second ? average_rank : 0;
    tie_term += group * group * group - group;
    ties = ties || group > 1;
    start = end;
  }
  const double m1 = static_cast<double>(n1), m2 = static_cast<double>(n2), total = static_cast<double>(n);
  const double u1 = rank_sum_x - m1 * (m1 + 1) / 2;
  const double u = std::max(u1, m1 * m2 - u1);  // the larger U: its upper tail, doubled
  result.u_statistic = u1;

  double p = 0;
  if ((n1 <= kExactMaxSamples || n2 <= kExactMaxSamples) && !ties) {
    result.exact = true;
    p = 2 * mann_whitney_exact_upper_tail(static_cast<int>(n1), static_cast<int>(n2), u);
  } else {
    const double mean = m1 * m2 / 2;
    const double spread = std::sqrt(m1 * m2 / 12 * ((total + 1) - tie_term / (total * (total - 1))));
    // Continuity correction: subtracting 1/2 keeps the mass at U itself in the tail.
    const double z = spread > 0 ? (u - mean - 0.5) / spread : -INFINITY;
    p = std::erfc(z / std::sqrt(2.0));  // 2 * P(Z >= z)
  }
  result.p_value = std::clamp(p, 0.0, 1.0);
  return result;
}

}  // namespace attnsweep::compare
