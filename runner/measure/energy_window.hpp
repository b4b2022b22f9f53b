#pragma once
// The energy of one pass (docs/measurement.md, "Energy"). NVML's energy counter
// advances in steps (every 100 ms on the H200), so the difference over one
// sample, or over any stretch that does not begin and end on a step, is mostly
// the rounding of the steps (issue 24 read 279 W and 800 W over 46 ms of the
// same kernel against a 700 W limit). So the window starts on a step of the
// counter, runs the pass back to back (queued in chunks, synchronized between
// them so the host's clock follows the GPU) until at least the asked-for wall
// time has gone by, and ends on the first step after the last synchronize:
// joules per pass = dE / passes, average power = dE / dt, with dt the host time
// between the two steps. LibTorch- and NVML-free: the case runner hands it the
// counter and the pass, the tests a counter of their own.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace attnsweep {

// What the window reads and runs.
struct EnergyWindowHooks {
  std::function<std::optional<std::uint64_t>()> read_energy_mj;  // the counter, mJ; empty: cannot be read
  std::function<void()> run_pass;     // queues one pass (on CUDA it returns before the GPU is done)
  std::function<void()> synchronize;  // waits until every queued pass has run
};

struct EnergyWindowSettings {
  double window_s = 0;           // run passes until at least this much wall time since the first step
  double step_wait_max_s = 0.2;  // the longest wait for one step of the counter
  double chunk_s = 0.02;         // passes are queued in chunks of about this much time
  double poll_s = 0.0005;        // the counter is read this often while waiting for a step
};

struct EnergyMeasurement {
  double joules_per_pass = 0;
  double power_w = 0;
  double window_s = 0;  // host seconds between the two steps
  int passes = 0;
  std::uint64_t energy_mj = 0;  // the counter's difference between the two steps
};

struct EnergyWindowOutcome {
  std::optional<EnergyMeasurement> measurement;
  std::string why_not;  // when there is no measurement: why, in words
};

// Runs the window. Throws Interrupted on a stop request (checked between chunks).
EnergyWindowOutcome measure_energy_window(const EnergyWindowHooks& hooks, const EnergyWindowSettings& settings);

}  // namespace attnsweep
