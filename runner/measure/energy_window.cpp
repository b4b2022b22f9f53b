#include "runner/measure/energy_window.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

#include "runner/common/interrupt.hpp"
#include "runner/common/text.hpp"

namespace attnsweep {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

// One step of the counter: its new value and when the host saw it.
struct Step {
  std::uint64_t energy_mj = 0;
  Clock::time_point at;
};

// Reads the counter until it differs from `from`, for at most `max_s`. Empty
// when it did not step in that time or could not be read; `why` says which.
std::optional<Step> next_step(const EnergyWindowHooks& hooks, std::uint64_t from, const EnergyWindowSettings& settings,
                              std::string& why) {
  const auto start = Clock::now();
  const auto poll = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(settings.poll_s));
  for (;;) {
    const auto value = hooks.read_energy_mj();
    const auto now = Clock::now();
    if (!value) {
      why = "NVML's energy counter could not be read";
      return std::nullopt;
    }
    if (*value != from) return Step{*value, now};
    if (seconds_between(start, now) >= settings.step_wait_max_s) {
      why = "NVML's energy counter did not step within " + text::fixed(1000 * settings.step_wait_max_s, 0) + " ms";
      return std::nullopt;
    }
    std::this_thread::sleep_for(poll);
  }
}

}  // namespace

EnergyWindowOutcome measure_energy_window(const EnergyWindowHooks& hooks, const EnergyWindowSettings& settings) {
  EnergyWindowOutcome outcome;
  hooks.synchronize();  // nothing of before is inside the window
  const auto first = hooks.read_energy_mj();
  if (!first) {
    outcome.why_not =
        "NVML's energy counter cannot be read on this GPU (no NVML, or a GPU or driver without "
        "nvmlDeviceGetTotalEnergyConsumption)";
    return outcome;
  }
  const std::optional<Step> start = next_step(hooks, *first, settings, outcome.why_not);
  if (!start) {
    outcome.why_not += " before the window";
    return outcome;
  }

  // Passes in chunks of about chunk_s, the first of one pass; each chunk is
  // synchronized so that the host's clock says how far the GPU has got.
  int passes = 0;
  long chunk = 1;
  for (;;) {
    for (long i = 0; i < chunk; ++i) hooks.run_pass();
    hooks.synchronize();
    passes += static_cast<int>(chunk);
    const double elapsed = seconds_between(start->at, Clock::now());
    const double left = settings.window_s - elapsed;
    if (left <= 0) break;
    if (interrupt_requested()) throw Interrupted{};
    const double per_pass = std::max(elapsed / passes, 1e-7);
    const double wanted = std::min(settings.chunk_s, left) / per_pass;
    chunk = static_cast<long>(std::clamp(std::floor(wanted), 1.0, 1e6));
  }

  // The window ends on the first step after the last synchronize: the energy
  // of the last passes is in it (with what the idle GPU drew until that step).
  const auto after = hooks.read_energy_mj();
  if (!after) {
    outcome.why_not = "NVML's energy counter could not be read after the window";
    return outcome;
  }
  const std::optional<Step> end = next_step(hooks, *after, settings, outcome.why_not);
  if (!end) {
    outcome.why_not += " after the window";
    return outcome;
  }
  if (end->energy_mj <= start->energy_mj) {
    outcome.why_not = "NVML's energy counter went back (" + std::to_string(start->energy_mj) + " mJ, then " +
                      std::to_string(end->energy_mj) + " mJ): reset or wrapped during the window";
    return outcome;
  }
  EnergyMeasurement measured;
  measured.energy_mj = end->energy_mj - start->energy_mj;
  measured.passes = passes;
  measured.window_s = seconds_between(start->at, end->at);
  const double joules = static_cast<double>(measured.energy_mj) / 1000.0;
  measured.joules_per_pass = joules / passes;
  measured.power_w = joules / measured.window_s;
  outcome.measurement = measured;
  return outcome;
}

}  // namespace attnsweep
