#pragma once
// --gpus: one worker process per device, pinned to it and serving cases one
// after another (worker.hpp, serve_cases), all fed from one queue of work
// units, longest expected first (runner/plan/shard.hpp). Workers store the
// cases they measure; the pool stores a case whose worker crashed or ran past
// measure.case_timeout_s, and starts a fresh worker for the rest of its unit.
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "runner/config/measure_settings.hpp"
#include "runner/plan/plan.hpp"
#include "storage/store.hpp"

namespace attnsweep::execute {

struct PoolRequest {
  std::string config_sha256;  // of the config text the run stored, which workers read
  std::string db_path;
  std::int64_t run_id = 0;
  std::vector<Device> devices;  // one worker each
  double case_timeout_s = 900;
  bool isolate = false;         // a fresh worker process for every case
  std::string traces_dir;       // empty: no traces
};

struct PoolHooks {
  std::function<void()> after_case;  // after every finished case; throws to stop the sweep
  std::function<bool()> keep_alive;  // about once a minute; false: the run was taken over, stop
  // The progress display (progress_display.hpp): a case handed out, labelled
  // with its device, returns its position (the i of "[i/N]"); a case stored.
  std::function<int(int plan_index, const std::string& label)> case_started;
  std::function<void(int plan_index, CaseStatus status)> case_finished;
};

// Runs the cases of `plan` that are not in `done`. Returns false when a stop
// was requested (the cases in flight are dropped; --resume redoes them).
// A device whose worker cannot start twice in a row is left out (its cases go
// to the others); throws when no device is left, or when a hook throws. Live
// workers are killed before it returns or throws.
bool run_cases_on_devices(const Plan& plan, const MeasureSettings& measure, const std::set<int>& done,
                          const PoolRequest& request, storage::Store& store, const PoolHooks& hooks);

// Parses --gpus: "all" (every device of `available`) or a comma-separated list
// of distinct indexes below `available`. Throws BadInputError naming what is allowed.
std::vector<Device> parse_gpus(const std::string& text, int available);

}  // namespace attnsweep::execute
