#pragma once
// The views' columns that the reader reads besides the tables' (docs/schema.md):
// the backend choice per case group (choice) and each case's shares of the
// ceilings (results). Read only, leniently (fields.hpp, "Views"). Internal to
// runner/storage/; claim_results is claim_columns.hpp's.
#include "runner/storage/case_shares.hpp"
#include "runner/storage/choice_row.hpp"
#include "runner/storage/fields.hpp"

namespace attnsweep::storage {

const fields::Table<ChoiceRow>& choice_columns();
const fields::Table<CaseShares>& case_share_columns();

}  // namespace attnsweep::storage
