#pragma once
// Timed samples of one callable, taken until the stopping rule says stop: the
// same loop for eager forwards and CUDA-graph replays. Every sample is kept in
// the result (the samples table); throttled ones and those whose blocking
// kernel gave up stay out of the statistics and of the stopping rule.
#include <functional>
#include <vector>

#include "runner/measure/case_result.hpp"
#include "runner/measure/stopping_rule.hpp"
#include "runner/measure/timer.hpp"

namespace attnsweep {

// What is left of the burst regime's cool-down allowance: the case's own and
// the measuring process's (shared by its cases). Spent by sample_until_stop.
struct CooldownBudget {
  double case_left_s = 0;
  double* run_left_s = nullptr;  // owned by the case runner; may be null (no run limit)
  bool exhausted = false;        // the allowance ran out in this case
};

struct SamplingSettings {
  StoppingSettings stopping;        // eager samples
  StoppingSettings graph_stopping;  // CUDA-graph replays
  double throttle_fraction = 0.75;  // samples under this share of the max SM clock are not kept
  MeasureRegime regime = MeasureRegime::sustained;  // burst: Timer::cool_down before every sample
  double burst_cooldown_max_s = 0.5;
  CooldownBudget* cooldown_budget = nullptr;  // burst: the allowance; null means none is kept

  static SamplingSettings from(const MeasureSettings& measure) {
    return {StoppingSettings::from(measure), StoppingSettings::for_graph_replays(measure), measure.throttle_fraction,
            measure.regime, measure.burst_cooldown_max_ms / 1000.0};
  }
};

// The burst regime's cool-down (Timer::cool_down), as long as the case's and
// the run's allowances let it be; returns the seconds spent. The first time
// either runs out, the case says so (a warning) and later samples are taken
// without cooling down. sample_until_stop calls it before every sample, the
// energy window once before it starts.
double cool_down_within_budget(Timer& timer, const SamplingSettings& settings, CaseResult& result);

// Appends every sample to result.samples and returns the kept times (us), under
// the mode's stopping rule; sets result.stop_reason (eager) or
// result.graph_stop_reason (graph). Throws Interrupted on a stop request.
// `before`, when set, runs ahead of each sample, outside its interval (and
// before the burst regime's cool-down): a backward's forward.
std::vector<double> sample_until_stop(Timer& timer, const std::function<void()>& call, SampleMode mode,
                                      const SamplingSettings& settings, CaseResult& result,
                                      const std::function<void()>& before = {});

// Eager timing of a case: samples, then the statistics, clocks, dispatch time,
// TFLOP/s and bandwidth derived from them.
void time_eager(Timer& timer, const std::function<void()>& call, const SamplingSettings& settings, bool cuda,
                bool hide_launch_latency, CaseResult& result, const std::function<void()>& before = {});

}  // namespace attnsweep
