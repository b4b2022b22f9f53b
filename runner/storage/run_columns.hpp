#pragma once
// The runs table described once (docs/schema.md): every column of a RunRow,
// how it is written and read back. Internal to runner/storage/; see
// case_columns.hpp for the cases table.
#include <string>

#include "runner/device/environment.hpp"
#include "runner/storage/claim.hpp"
#include "runner/storage/fields.hpp"
#include "runner/storage/run_record.hpp"
#include "runner/storage/run_row.hpp"

namespace attnsweep::storage {

const fields::Table<RunRow>& run_columns();

// The row a new run is stored as: the record, its start (UTC), the process
// that claims it from its start, and its run_uuid.
RunRow run_record(const RunRecord& run, const std::string& started_at, const Claim& owner, const std::string& run_uuid);

// Whether a change of the variable `name` in runs.env_vars moves times (the
// allocator, TF32, launch blocking): the env_vars column's part of
// moves_times() (run_facts.hpp).
bool variable_moves_times(const std::string& name);

// runs.env_vars and run_devices.env_vars: a JSON object, "{}" when none is set.
std::string env_vars_json(const EnvironmentInfo& environment);

}  // namespace attnsweep::storage
