#pragma once
// Measurement settings for the tests that run real cases: a few warm-up and
// timed forwards and a couple of seconds at most, so that a test costs seconds,
// not the documented defaults' minutes; everything else stays as documented.
#include "runner/config/measure_settings.hpp"

namespace attnsweep::testing {

inline MeasureSettings few_samples(int warmup, int min_samples, int max_samples, double max_case_seconds,
                                   int profiled_forwards) {
  MeasureSettings settings;
  settings.warmup = warmup;
  settings.min_samples = min_samples;
  settings.max_samples = max_samples;
  settings.max_case_seconds = max_case_seconds;
  settings.profiled_forwards = profiled_forwards;
  return settings;
}

}  // namespace attnsweep::testing
