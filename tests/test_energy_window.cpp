// The energy window (runner/measure/energy_window.cpp) against counters made
// here: a GPU drawing a steady power whose counter advances in steps, as
// NVML's does, one that cannot be read, one that never steps, one that stops
// or goes back. Real time: the window waits on the steady clock as it does on
// a GPU, so these take about a second in all.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <optional>
#include <thread>
#include <vector>

#include "runner/measure/energy_window.hpp"

namespace attnsweep {
namespace {

using Clock = std::chrono::steady_clock;

// A GPU that draws `power_w` all the time; its counter (mJ) is brought up to
// date only every `step_s`, as NVML's is. A pass takes `pass_s` of wall time.
class SteadyGpu {
 public:
  SteadyGpu(double power_w, double step_s, double pass_s) : power_w_(power_w), step_s_(step_s), pass_s_(pass_s) {}

  std::optional<std::uint64_t> counter_mj() const {
    const double since = std::chrono::duration<double>(Clock::now() - start_).count();
    const double steps = std::floor(since / step_s_);
    return kStartMj + static_cast<std::uint64_t>(std::llround(steps * step_s_ * power_w_ * 1000));
  }
  // Energy (mJ) of one step of the counter.
  std::uint64_t step_mj() const { return static_cast<std::uint64_t>(std::llround(step_s_ * power_w_ * 1000)); }

  EnergyWindowHooks hooks() {
    return {[this] { return counter_mj(); },
            [this] {
              ++queued_;
              ++passes_;
            },
            [this] {
              // The queued passes run now, one after another.
              if (queued_ > 0) std::this_thread::sleep_for(std::chrono::duration<double>(pass_s_ * queued_));
              chunks_.push_back(queued_);
              queued_ = 0;
            }};
  }

  int passes_ = 0;
  std::vector<int> chunks_;  // passes per synchronize, in order (0: a synchronize with nothing queued)

 private:
  static constexpr std::uint64_t kStartMj = 123456789;  // since the driver was loaded
  double power_w_, step_s_, pass_s_;
  int queued_ = 0;
  Clock::time_point start_ = Clock::now();
};

TEST(EnergyWindow, ASteadyPowerIsReadBackBetweenTwoStepsOfTheCounter) {
  SteadyGpu gpu(/*power_w=*/400, /*step_s=*/0.01, /*pass_s=*/0.001);
  EnergyWindowSettings settings;
  settings.window_s = 0.25;
  const EnergyWindowOutcome outcome = measure_energy_window(gpu.hooks(), settings);
  ASSERT_TRUE(outcome.measurement) << outcome.why_not;
  const EnergyMeasurement& m = *outcome.measurement;
  // Both ends on a step: the difference is whole steps of 4 J.
  EXPECT_EQ(m.energy_mj % gpu.step_mj(), 0u) << m.energy_mj;
  EXPECT_GE(m.energy_mj, 25 * gpu.step_mj());  // at least the window, 0.25 s of 400 W
  EXPECT_EQ(m.passes, gpu.passes_);
  EXPECT_GE(m.passes, 50);    // 1 ms passes for 0.25 s, chunked (sleeps overshoot, never undershoot)
  EXPECT_LE(m.passes, 260);
  EXPECT_GE(m.window_s, settings.window_s);
  EXPECT_LE(m.window_s, settings.window_s + settings.chunk_s + 2 * settings.step_wait_max_s);
  // The power read back is the power drawn: steps are 10 ms, the host sees each within a poll of 0.5 ms.
  EXPECT_NEAR(m.power_w, 400, 40) << m.window_s << " s, " << m.energy_mj << " mJ";
  EXPECT_NEAR(m.joules_per_pass * m.passes, m.energy_mj / 1000.0, 1e-9);
  EXPECT_NEAR(m.joules_per_pass, m.power_w * m.window_s / m.passes, 1e-9);
}

TEST(EnergyWindow, PassesAreQueuedInChunksSynchronizedBetween) {
  SteadyGpu gpu(300, 0.005, 0.0001);  // 0.1 ms passes: a chunk of 20 ms holds about 200
  EnergyWindowSettings settings;
  settings.window_s = 0.2;
  const EnergyWindowOutcome outcome = measure_energy_window(gpu.hooks(), settings);
  ASSERT_TRUE(outcome.measurement) << outcome.why_not;
  ASSERT_GE(gpu.chunks_.size(), 3u);
  EXPECT_EQ(gpu.chunks_[0], 0);  // the synchronize before the window: nothing of this window queued yet
  EXPECT_EQ(gpu.chunks_[1], 1);  // the first chunk is one pass, which sizes the next
  int largest = 0, total = 0;
  for (const int chunk : gpu.chunks_) {
    largest = std::max(largest, chunk);
    total += chunk;
  }
  EXPECT_GT(largest, 20) << "chunks of about 20 ms, not one pass each";
  EXPECT_EQ(total, outcome.measurement->passes);
  EXPECT_EQ(outcome.measurement->passes, gpu.passes_);
}

TEST(EnergyWindow, ACounterThatCannotBeReadRunsNothing) {
  SteadyGpu gpu(400, 0.01, 0.001);
  EnergyWindowHooks hooks = gpu.hooks();
  hooks.read_energy_mj = [] { return std::optional<std::uint64_t>(); };
  EnergyWindowSettings settings;
  settings.window_s = 0.1;
  const EnergyWindowOutcome outcome = measure_energy_window(hooks, settings);
  EXPECT_FALSE(outcome.measurement);
  EXPECT_EQ(outcome.why_not,
            "NVML's energy counter cannot be read on this GPU (no NVML, or a GPU or driver without "
            "nvmlDeviceGetTotalEnergyConsumption)");
  EXPECT_EQ(gpu.passes_, 0);
}

TEST(EnergyWindow, ACounterThatNeverStepsGivesUpAfterTheWait) {
  SteadyGpu gpu(400, 0.01, 0.001);
  EnergyWindowHooks hooks = gpu.hooks();
  hooks.read_energy_mj = [] { return std::optional<std::uint64_t>(5000); };
  EnergyWindowSettings settings;
  settings.window_s = 0.1;
  settings.step_wait_max_s = 0.05;
  const auto start = Clock::now();
  const EnergyWindowOutcome outcome = measure_energy_window(hooks, settings);
  const double waited = std::chrono::duration<double>(Clock::now() - start).count();
  EXPECT_FALSE(outcome.measurement);
  EXPECT_EQ(outcome.why_not, "NVML's energy counter did not step within 50 ms before the window");
  EXPECT_EQ(gpu.passes_, 0);
  EXPECT_GE(waited, 0.05);
  EXPECT_LT(waited, 1.0);
}

TEST(EnergyWindow, ACounterThatStopsDuringTheWindowGivesNoEnergy) {
  SteadyGpu gpu(400, 0.01, 0.001);
  EnergyWindowHooks hooks = gpu.hooks();
  std::optional<std::uint64_t> frozen;
  hooks.read_energy_mj = [&gpu, &frozen]() -> std::optional<std::uint64_t> {
    if (gpu.passes_ == 0) return gpu.counter_mj();
    if (!frozen) frozen = gpu.counter_mj();
    return frozen;  // stuck once the passes began
  };
  EnergyWindowSettings settings;
  settings.window_s = 0.05;
  settings.step_wait_max_s = 0.05;
  const EnergyWindowOutcome outcome = measure_energy_window(hooks, settings);
  EXPECT_FALSE(outcome.measurement);
  EXPECT_EQ(outcome.why_not, "NVML's energy counter did not step within 50 ms after the window");
  EXPECT_GT(gpu.passes_, 0);
}

TEST(EnergyWindow, ACounterThatGoesBackGivesNoEnergy) {
  SteadyGpu gpu(400, 0.01, 0.001);
  EnergyWindowHooks hooks = gpu.hooks();
  // Steps up once before the window, then (a driver reload) starts again from far below.
  int reads = 0;
  hooks.read_energy_mj = [&]() -> std::optional<std::uint64_t> {
    ++reads;
    if (gpu.passes_ == 0) return reads == 1 ? 900000 : 900500;
    return 1000 + static_cast<std::uint64_t>(reads);
  };
  EnergyWindowSettings settings;
  settings.window_s = 0.02;
  const EnergyWindowOutcome outcome = measure_energy_window(hooks, settings);
  EXPECT_FALSE(outcome.measurement);
  EXPECT_NE(outcome.why_not.find("NVML's energy counter went back (900500 mJ, then "), std::string::npos)
      << outcome.why_not;
  EXPECT_NE(outcome.why_not.find("reset or wrapped during the window"), std::string::npos) << outcome.why_not;
}

}  // namespace
}  // namespace attnsweep
