#pragma once
// The cases table described once (docs/schema.md): every column of a CaseRow,
// how it is written and read back, and how a printer shows it. The INSERT,
// the SELECT and the reading of a row come from this one list, so a new column
// is one entry here (and one in schema.sql). Internal to runner/storage/; the
// output layer reaches a column by name through case_value() (case_row.hpp).
#include "runner/storage/case_row.hpp"
#include "runner/storage/fields.hpp"

namespace attnsweep::storage {

const fields::Table<CaseRow>& case_columns();

}  // namespace attnsweep::storage
