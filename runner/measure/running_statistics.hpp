#pragma once
// Mean, variance and sum of a stream of samples without keeping them (Welford's
// running variance): what the stopping rule and its criteria look at after
// every sample, where summarize() would sort the whole list each time.
#include <cmath>

namespace attnsweep {

struct RunningStatistics {
  int count = 0;
  double mean = 0;
  double m2 = 0;     // the sum of squared deviations from the mean
  double total = 0;  // the samples' sum

  void add(double value) {
    ++count;
    const double delta = value - mean;
    mean += delta / count;
    m2 += delta * (value - mean);
    total += value;
  }

  // Sample stdev / mean; infinite under two samples or for a mean that is not positive.
  double rel_stdev() const {
    if (count < 2 || mean <= 0) return INFINITY;
    return std::sqrt(m2 / (count - 1)) / mean;
  }
};

}  // namespace attnsweep
