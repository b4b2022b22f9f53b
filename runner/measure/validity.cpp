#include "runner/measure/validity.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "runner/common/numerics.hpp"
#include "runner/common/text.hpp"
#include "runner/measure/statistics.hpp"

namespace attnsweep {
namespace {

std::string percent(double share) { return text::fixed(100 * share, 0) + "%"; }

std::string scientific(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.2e", value);
  return buffer;
}

}  // namespace

std::optional<SampleLevels> sample_levels(const std::vector<TimingSample>& samples) {
  using namespace validity_bounds;
  std::vector<double> kept;
  for (const TimingSample& sample : samples) {
    if (sample.mode == SampleMode::eager && sample.gpu_time_us && std::isfinite(*sample.gpu_time_us) &&
        !sample.throttled && !sample.block_timed_out) {
      kept.push_back(*sample.gpu_time_us);
    }
  }
  const int n = static_cast<int>(kept.size());
  const int size = std::max(kLevelMinBlock, n / kLevelBlocks);
  const int blocks = n / size;  // a last partial block is left out
  if (blocks < kLevelMinBlocksJudged) return std::nullopt;
  const auto median_of = [](std::vector<double> values) {
    std::sort(values.begin(), values.end());
    return percentile_sorted(values, 0.5);
  };
  std::vector<double> block_medians, block_sigmas;
  for (int b = 0; b < blocks; ++b) {
    const std::vector<double> block(kept.begin() + b * size, kept.begin() + (b + 1) * size);
    const double middle = median_of(block);
    std::vector<double> deviations;
    for (double value : block) deviations.push_back(std::abs(value - middle));
    block_medians.push_back(middle);
    block_sigmas.push_back(1.4826 * median_of(deviations));  // the MAD as a normal's sigma
  }
  SampleLevels levels;
  levels.block_size = size;
  levels.blocks = blocks;
  levels.lowest_us = *std::min_element(block_medians.begin(), block_medians.end());
  levels.highest_us = *std::max_element(block_medians.begin(), block_medians.end());
  levels.median_us = median_of(std::vector<double>(kept.begin(), kept.begin() + blocks * size));
  // A block median's standard error under scattered noise: 1.2533 sigma / sqrt(size).
  const double standard_error = 1.2533 * median_of(block_sigmas) / std::sqrt(static_cast<double>(size));
  levels.allowed_us = std::max({kLevelRelative * levels.median_us, kLevelNoiseSe * standard_error, kLevelMinUs});
  return levels;
}

void judge_validity(const Case& c, const ValidityLimits& limits, CaseResult& result) {
  result.validity.clear();
  result.validity_reasons.clear();
  const std::optional<SampleStatistics>& timed = result.gpu_time_us ? result.gpu_time_us : result.cpu_time_us;
  if (result.status != CaseStatus::ok || !timed || timed->count == 0) return;
  std::vector<ValidityReason>& reasons = result.validity_reasons;
  using namespace validity_bounds;

  if (result.other_processes.value_or(0) > 0) {
    reasons.push_back({ValidityCode::shared_gpu, std::to_string(*result.other_processes) +
                                                     " other compute process(es) on the GPU during the case"});
  }
  const bool counts_known = result.profile && result.profile->counts_consistent &&
                            !result.profile->kernels_each_forward.empty();
  if (result.profile && !result.profile->counts_consistent) {
    reasons.push_back({ValidityCode::counts_inconsistent, "the profiled passes did not all show the same kernels"});
  }
  // Kernels and copies of an eager pass, counted together: a graph may run a
  // device-to-device copy as a kernel.
  const int eager_launches =
      counts_known ? result.profile->kernels_each_forward.front() +
                         (result.profile->memcpy_each_forward.empty() ? 0 : result.profile->memcpy_each_forward.front())
                   : 0;
  // Only for a pass that is GPU work alone: with launch latency held out of the
  // events, their interval is the pass's kernels and the gaps between them.
  if (result.gpu_time_us && result.launch_latency_hidden.value_or(false) && counts_known &&
      result.profile->kernel_time_us_per_forward > 0) {
    const double event = result.gpu_time_us->median;
    const double kernels = result.profile->kernel_time_us_per_forward;
    const bool kernels_longer = kernels > event;
    const double allowed = (kernels_longer ? kKernelsOverEvents : kEventsOverKernels).allowed_us(event, eager_launches);
    // Events longer than the kernels, and the CUDA graph's replays (no host in
    // the loop) about as long as the events: the GPU itself spends that time
    // between the kernels, nothing idled inside the interval. On the H200, cuDNN
    // decoding over 4096 keys: 5 kernels of 41.5 us in 57.6 us of events, its
    // replays 54.9 us (proofs/serving/h200-serving.md).
    const bool gaps_on_the_gpu = !kernels_longer && result.graph_time_us &&
                                 result.graph_time_us->median >= kGraphConfirmsEventsShare * event;
    if (std::abs(kernels - event) > allowed && !gaps_on_the_gpu) {
      reasons.push_back({ValidityCode::event_vs_kernels,
                         "the profiler's kernel time is " + text::fixed(kernels, 1) +
                             " us per pass, the event median " + text::fixed(event, 1) + " us (ratio " +
                             text::fixed(kernels / event, 2) + ", " + (kernels_longer ? "kernels" : "events") +
                             " longer by more than the allowed " + text::fixed(allowed, 1) + " us)"});
    }
  }
  if (result.graph_launches_per_replay && counts_known && *result.graph_launches_per_replay != eager_launches) {
    reasons.push_back({ValidityCode::graph_kernel_count,
                       "a profiled CUDA-graph replay launched " + std::to_string(*result.graph_launches_per_replay) +
                           " kernel(s) and copies, an eager pass " + std::to_string(eager_launches)});
  }
  if (result.graph_output_rel_diff) {
    const double diff = *result.graph_output_rel_diff;
    const double bound = numerics_bound(c.dtype);
    if (!std::isfinite(diff)) {
      reasons.push_back(
          {ValidityCode::graph_output, "the CUDA-graph replays' output is not finite (the eager output is)"});
    } else if (diff > bound) {
      reasons.push_back(
          {ValidityCode::graph_output, "the CUDA-graph replays' output differs from the eager output by " +
                                           scientific(diff) + " (relative; bound " + scientific(bound) + ")"});
    }
  }
  if (result.throttled_samples > 0) {
    reasons.push_back(
        {ValidityCode::throttled_samples,
         std::to_string(result.throttled_samples) + " sample(s) dropped, the SM clock under the throttle fraction"});
  }
  if (result.power_cap_share && *result.power_cap_share > kCapShare) {
    reasons.push_back(
        {ValidityCode::power_capped, percent(*result.power_cap_share) + " of the kept samples under a power cap"});
  }
  if (result.thermal_cap_share && *result.thermal_cap_share > kCapShare) {
    reasons.push_back({ValidityCode::thermal_capped,
                       percent(*result.thermal_cap_share) + " of the kept samples under a thermal slowdown"});
  }
  if (timed->count < limits.min_samples) {
    reasons.push_back({ValidityCode::few_samples, std::to_string(timed->count) + " kept sample(s), under min_samples " +
                                                      std::to_string(limits.min_samples)});
  }
  const bool capped_stop = result.stop_reason && is_cap(*result.stop_reason);
  if (capped_stop && !limits.fixed_sample_count && timed->count >= 2 && timed->rel_stdev() > limits.target_rel_stdev) {
    reasons.push_back({ValidityCode::not_converged,
                       std::string("stopped at ") + to_string(*result.stop_reason) + " with a relative stdev of " +
                           text::fixed(100 * timed->rel_stdev(), 1) + "% (target " +
                           text::fixed(100 * limits.target_rel_stdev, 1) + "%), still moving"});
  }
  if (const auto levels = sample_levels(result.samples); levels && levels->shifted()) {
    reasons.push_back({ValidityCode::level_shift,
                       "the medians of " + std::to_string(levels->blocks) + " consecutive blocks of " +
                           std::to_string(levels->block_size) + " samples ranged from " +
                           text::fixed(levels->lowest_us, 1) + " to " + text::fixed(levels->highest_us, 1) + " us (" +
                           text::fixed(100 * (levels->highest_us - levels->lowest_us) / levels->median_us, 1) +
                           "% of the median, allowed " + text::fixed(levels->allowed_us, 1) +
                           " us): the time moved between levels, so the median depends on when the case stopped"});
  }
  if (result.cooldown_budget_exhausted) {
    reasons.push_back({ValidityCode::cooldown_exhausted,
                       "the burst regime's cool-down allowance ran out; later samples were "
                       "taken without cooling down"});
  }
  result.validity = reasons.empty() ? "ok" : "suspect";
}

}  // namespace attnsweep
