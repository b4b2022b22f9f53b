#pragma once
// `attnsweep query`: the rows of a user's SQL as a table; NULL spelled out.
#include "runner/report/table.hpp"
#include "storage/query.hpp"

namespace attnsweep::report {

Table query_table(const storage::QueryResult& result);

}  // namespace attnsweep::report
