#pragma once
// The environment facts of EnvironmentInfo, each named once: its name (the key
// of `attnsweep env` and of the worker's JSON, and the column of runs and
// run_devices), how its value is read as JSON (null when unknown) and set back,
// and where it is stored. The fingerprint, the worker's probe and the store
// all go through this one list, so a new fact is one line here. LibTorch-free.
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "runner/device/environment.hpp"

namespace attnsweep {

// When a fact is unknown (JSON null, a NULL column): the value EnvironmentInfo
// holds for "not known" (0, empty, -1).
enum class UnknownWhen {
  never,              // always known (device, env_vars, cuda_device_count)
  empty,              // an empty text
  not_positive,       // a count, size, clock or temperature of 0 (or less)
  negative,           // -1 (other_processes_start, gpu_utilization_start_pct): 0 is a fact
  without_clock,      // clock_event_reasons_start: only read with the SM clock (sm_clock_start_mhz > 0)
};

// Where a fact is stored (a bit set): runs, run_devices, both, or neither
// (shown by `attnsweep env` and carried by the worker, not stored).
enum StoredIn : unsigned { kNotStored = 0, kInRuns = 1, kInRunDevices = 2, kInBoth = 3 };

struct EnvironmentFact {
  const char* name;
  UnknownWhen unknown_when;
  unsigned stored_in;  // StoredIn bits
  // JSON of the value: a string, number or (env_vars) object; null when unknown.
  // A Device is its spelling ("cuda:0"); env_vars an object of strings (a
  // store writes it as compact JSON text, "{}" when none is set).
  std::function<nlohmann::json(const EnvironmentInfo&)> get;
  // Sets it from what `get` gave; null (or a missing key) sets the unknown
  // value. Throws std::runtime_error for a value of the wrong type.
  std::function<void(EnvironmentInfo&, const nlohmann::json&)> set;

  bool stored_in_runs() const { return (stored_in & kInRuns) != 0; }
  bool stored_in_run_devices() const { return (stored_in & kInRunDevices) != 0; }
};

// Every member of EnvironmentInfo, in declaration order.
const std::vector<EnvironmentFact>& environment_facts();

// Every fact by name (the worker's JSON, the fingerprint's facts).
nlohmann::json environment_to_json(const EnvironmentInfo& environment);
// The inverse: facts missing from `json` keep their unknown value.
EnvironmentInfo environment_from_json(const nlohmann::json& json);

}  // namespace attnsweep
