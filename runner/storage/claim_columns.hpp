#pragma once
// The claims table described once (docs/schema.md): every column of a ClaimRow,
// how it is written and read back, and the claim_results view's columns of
// what the run measured. Internal to runner/storage/; see run_columns.hpp.
#include "runner/storage/claim_result.hpp"
#include "runner/storage/claim_row.hpp"
#include "runner/storage/fields.hpp"

namespace attnsweep::storage {

// claims: run_id (the key), then one column per ClaimRow member. Read back as
// the readers of claims always took it: text leniently (fields::view_text: NULL
// as "", a whole number as its digits), the figures and plan_index held to what the
// store writes (a claimed figure above 0, at least one of the two, a
// plan_index >= 0): anything else is a damaged database.
const fields::Table<ClaimRow>& claim_columns();

// The claim_results view's columns beyond the claim's own (read only, leniently).
const fields::Table<ClaimResult>& claim_result_columns();

}  // namespace attnsweep::storage
