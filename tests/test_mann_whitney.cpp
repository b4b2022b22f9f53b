// The two-sided Mann-Whitney U test against scipy.stats.mannwhitneyu(x, y)
// (scipy 1.17.1, default method='auto', use_continuity=True): the reference
// values below are scipy's, printed with repr(float(...)) by
//   from scipy.stats import mannwhitneyu
//   r = mannwhitneyu(x, y, alternative='two-sided'); r.statistic, r.pvalue
// for the samples built here the same way in Python.
#include <gtest/gtest.h>

#include <vector>

#include "runner/compare/mann_whitney.hpp"

namespace attnsweep::compare {
namespace {

// 100 + (i*37 % 101)/10 for i < n: values from 100 to 110 in steps of 0.1, with ties past i = 100.
std::vector<double> spread_a(int n) {
  std::vector<double> values;
  for (int i = 0; i < n; ++i) values.push_back(100 + (i * 37 % 101) / 10.0);
  return values;
}

// 101 + (i*53 % 97)/10 for i < n.
std::vector<double> spread_b(int n) {
  std::vector<double> values;
  for (int i = 0; i < n; ++i) values.push_back(101 + (i * 53 % 97) / 10.0);
  return values;
}

std::vector<double> scaled(const std::vector<double>& values, double factor, std::size_t count) {
  std::vector<double> out;
  for (std::size_t i = 0; i < count && i < values.size(); ++i) out.push_back(values[i] * factor);
  return out;
}

void expect_scipy(const MannWhitneyResult& result, double u, double p, bool exact) {
  EXPECT_DOUBLE_EQ(result.u_statistic, u);
  EXPECT_NEAR(result.p_value, p, 1e-9 * p + 1e-300) << "p " << result.p_value << " vs scipy " << p;
  EXPECT_EQ(result.exact, exact);
}

TEST(MannWhitney, SmallSamplesWithoutTiesUseTheExactDistribution) {
  // scipy: statistic 3.0, pvalue 0.030303030303030304 (method 'exact': 5 and 6 samples, no ties).
  expect_scipy(mann_whitney_u({1.1, 2.3, 3.5, 4.2, 5.9}, {6.1, 7.4, 8.0, 2.9, 9.3, 10.5}), 3.0, 0.030303030303030304,
               true);
}

TEST(MannWhitney, ExactWhenOneSideIsSmallAndTheOtherLarge) {
  // scipy: statistic 1.0, pvalue 4.2703931825735074e-07 (6 vs 40 samples, no ties: exact).
  std::vector<double> y;
  for (int i = 0; i < 40; ++i) y.push_back(12 + (i * 7 % 41) / 8.0 + 0.001 * i);
  expect_scipy(mann_whitney_u({10.5, 11.25, 9.75, 12.125, 10.0625, 11.5}, y), 1.0, 4.2703931825735074e-07, true);
}

TEST(MannWhitney, SmallSamplesWithTiesUseTheTieCorrectedNormalApproximation) {
  // scipy: statistic 4.5, pvalue 0.06414661873440437 (ties: asymptotic).
  expect_scipy(mann_whitney_u({1, 2, 2, 3, 4}, {2, 3, 5, 6, 6, 7}), 4.5, 0.06414661873440437, false);
}

TEST(MannWhitney, IdenticalSamplesGiveOne) {
  // scipy: statistic 18.0, pvalue 1.0 (every value tied: no spread at all).
  expect_scipy(mann_whitney_u({5, 5, 5, 5, 5, 5}, {5, 5, 5, 5, 5, 5}), 18.0, 1.0, false);
  // scipy: statistic 50.0, pvalue 1.0.
  const std::vector<double> ten = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  expect_scipy(mann_whitney_u(ten, ten), 50.0, 1.0, false);
}

TEST(MannWhitney, LargeSamplesWithTies) {
  // scipy: statistic 12929.5, pvalue 0.02711400606250216 (200 vs 150 samples).
  expect_scipy(mann_whitney_u(spread_a(200), spread_b(150)), 12929.5, 0.02711400606250216, false);
}

TEST(MannWhitney, ThirtyPercentSlowerIsOverwhelminglySignificant) {
  // scipy: statistic 0.0, pvalue 1.3269440446288506e-63 (200 vs the first 180 scaled by 1.3).
  const std::vector<double> base = spread_a(200);
  expect_scipy(mann_whitney_u(base, scaled(base, 1.3, 180)), 0.0, 1.3269440446288506e-63, false);
}

TEST(MannWhitney, TwoPercentShiftOfAHundredSamples) {
  // scipy: statistic 3151.5, pvalue 6.3202029112125444e-06.
  const std::vector<double> base = spread_a(100);
  expect_scipy(mann_whitney_u(base, scaled(base, 1.02, 100)), 3151.5, 6.3202029112125444e-06, false);
}

TEST(MannWhitney, ThreeSamplesAgainstTwoHundredWithTies) {
  // scipy: statistic 0.0, pvalue 0.0030209588166716242 (ties in the 200: asymptotic).
  expect_scipy(mann_whitney_u(scaled({13.0, 13.5, 12.75}, 1.3, 3), spread_a(200)), 0.0, 0.0030209588166716242, false);
}

TEST(MannWhitney, TheTestIsSymmetricInItsSides) {
  const auto forward = mann_whitney_u(spread_a(60), spread_b(45));
  const auto backward = mann_whitney_u(spread_b(45), spread_a(60));
  EXPECT_DOUBLE_EQ(forward.p_value, backward.p_value);
  EXPECT_DOUBLE_EQ(forward.u_statistic + backward.u_statistic, 60.0 * 45.0);
}

TEST(MannWhitney, ExactUpperTailCountsArrangements) {
  // Sizes 2 and 2: U takes 0, 1, 2, 2, 3, 4 over the 6 arrangements.
  EXPECT_DOUBLE_EQ(mann_whitney_exact_upper_tail(2, 2, 4), 1.0 / 6);
  EXPECT_DOUBLE_EQ(mann_whitney_exact_upper_tail(2, 2, 2), 4.0 / 6);
  EXPECT_DOUBLE_EQ(mann_whitney_exact_upper_tail(2, 2, 0), 1.0);
  // The most extreme U of 8 against 2000 samples: 1 / C(2008, 8), computed without cancellation.
  double arrangements = 1;
  for (int i = 1; i <= 8; ++i) arrangements = arrangements * (2000 + i) / i;
  EXPECT_NEAR(mann_whitney_exact_upper_tail(8, 2000, 16000), 1 / arrangements, 1e-9 / arrangements);
}

TEST(MannWhitney, AnEmptySideGivesOne) {
  EXPECT_EQ(mann_whitney_u({}, {1, 2, 3}).p_value, 1.0);
  EXPECT_EQ(mann_whitney_u({1, 2, 3}, {}).p_value, 1.0);
}

}  // namespace
}  // namespace attnsweep::compare
