#include "runner/measure/sampling.hpp"

#include <algorithm>
#include <chrono>
#include <string>

#include "runner/common/elapsed.hpp"
#include "runner/common/interrupt.hpp"
#include "runner/device/nvml.hpp"

namespace attnsweep {
namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

double cool_down_within_budget(Timer& timer, const SamplingSettings& settings, CaseResult& result) {
  CooldownBudget* budget = settings.cooldown_budget;
  if (!budget) return timer.cool_down(settings.burst_cooldown_max_s);
  const double run_left = budget->run_left_s ? *budget->run_left_s : settings.burst_cooldown_max_s;
  const double allowed = std::min({settings.burst_cooldown_max_s, budget->case_left_s, run_left});
  if (allowed <= 0) {
    if (!budget->exhausted) {
      budget->exhausted = true;
      result.warnings.push_back(std::string("burst cool-down allowance of the ") +
                                (budget->case_left_s <= 0 ? "case (measure.burst_cooldown_case_max_s)"
                                                          : "run (measure.burst_cooldown_run_max_s)") +
                                " ran out after " + std::to_string(result.samples.size()) +
                                " samples; later samples were taken without cooling down");
    }
    return 0;
  }
  const double spent = timer.cool_down(allowed);
  budget->case_left_s -= spent;
  if (budget->run_left_s) *budget->run_left_s -= spent;
  return spent;
}

std::vector<double> sample_until_stop(Timer& timer, const std::function<void()>& call, SampleMode mode,
                                      const SamplingSettings& settings, CaseResult& result,
                                      const std::function<void()>& before) {
  StoppingRule rule(mode == SampleMode::graph ? settings.graph_stopping : settings.stopping);
  const auto max_clock = timer.max_sm_clock_mhz();
  std::vector<double> kept;
  const auto start = Clock::now();
  do {
    if (interrupt_requested()) throw Interrupted{};
    if (before) before();  // the timer drains the stream before its interval starts
    if (settings.regime == MeasureRegime::burst) result.cooldown_seconds += cool_down_within_budget(timer, settings, result);
    TimingSample sample = timer.time(call);
    sample.mode = mode;
    if (mode == SampleMode::graph) sample.host_dispatch_us.reset();
    sample.throttled =
        sample.sm_clock_mhz && max_clock && *sample.sm_clock_mhz < settings.throttle_fraction * *max_clock;
    if (sample.block_timed_out) {
      // The forward waited on the GPU while the stream was held: unblocked from now on.
      timer.stop_blocking();
      result.launch_latency_hidden = false;
      result.warnings.push_back("the forward waits on the GPU, so launch latency could not be kept out of the "
                                "event interval; samples taken without the blocking kernel");
    }
    const double value = sample.gpu_time_us ? *sample.gpu_time_us : *sample.cpu_time_us;
    if (!sample.throttled && !sample.block_timed_out) {
      rule.add_sample(value);
      kept.push_back(value);
    }
    result.samples.push_back(sample);
  } while (!rule.should_stop(seconds_since(start)));
  (mode == SampleMode::graph ? result.graph_stop_reason : result.stop_reason) = rule.reason();
  return kept;
}

void time_eager(Timer& timer, const std::function<void()>& call, const SamplingSettings& settings, bool cuda,
                bool hide_launch_latency, CaseResult& result, const std::function<void()>& before) {
  if (cuda) result.launch_latency_hidden = hide_launch_latency;
  const std::vector<double> kept = sample_until_stop(timer, call, SampleMode::eager, settings, result, before);
  result.timer = timer.name();
  std::vector<double> dispatch_times, clocks;
  int with_reasons = 0, power_capped = 0, thermal_capped = 0;
  for (const auto& sample : result.samples) {
    if (sample.throttled) ++result.throttled_samples;
    if (sample.throttled || sample.block_timed_out) continue;
    if (sample.host_dispatch_us) dispatch_times.push_back(*sample.host_dispatch_us);
    if (sample.sm_clock_mhz) clocks.push_back(*sample.sm_clock_mhz);
    if (sample.clock_event_reasons) {
      ++with_reasons;
      power_capped += (*sample.clock_event_reasons & nvml::reasons::kPowerCap) ? 1 : 0;
      thermal_capped += (*sample.clock_event_reasons & nvml::reasons::kThermalCap) ? 1 : 0;
    }
  }
  if (with_reasons > 0) {
    result.power_cap_share = static_cast<double>(power_capped) / with_reasons;
    result.thermal_cap_share = static_cast<double>(thermal_capped) / with_reasons;
  }
  if (kept.empty()) {
    result.warnings.push_back("every sample ran under the throttle fraction of the maximum SM clock");
    return;
  }
  const SampleStatistics stats = summarize(kept);
  if (cuda) {
    result.gpu_time_us = stats;
  } else {
    result.cpu_time_us = stats;
  }
  result.cpu_dispatch_us_median = summarize(dispatch_times).median;
  if (!clocks.empty()) result.sm_clock_mhz_mean = summarize(clocks).mean;
  if (stats.median > 0) {
    result.tflops = result.flops / (stats.median * 1e-6) / 1e12;
    result.bandwidth_gbps = result.min_bytes / (stats.median * 1e-6) / 1e9;
  }
}

}  // namespace attnsweep
