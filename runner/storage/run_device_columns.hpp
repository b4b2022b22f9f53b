#pragma once
// The run_devices table described once (docs/schema.md): the device's
// environment facts (environment_facts.hpp: those stored in run_devices, in
// their order), then its ceilings. A row's keys come from its run's row
// (run_id, shard_index) and the time it is recorded (Store::add_run_device).
// Internal to runner/storage/; see run_columns.hpp.
#include "runner/storage/fields.hpp"
#include "runner/storage/run_device.hpp"

namespace attnsweep::storage {

// Keyed by recorded_at (bound by the store); run_id and shard_index are the run's.
const fields::Table<RunDevice>& run_device_columns();

}  // namespace attnsweep::storage
