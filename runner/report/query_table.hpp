#pragma once
// `attnsweep query`: the columns and rows of a user's SQL as typed cells,
// one row at a time (a result streams through a RowWriter); NULL spelled out.
#include <string>
#include <vector>

#include "runner/report/table.hpp"
#include "runner/storage/query.hpp"

namespace attnsweep::report {

std::vector<Column> query_columns(const std::vector<std::string>& names);
std::vector<Cell> query_cells(const std::vector<storage::QueryValue>& values);

}  // namespace attnsweep::report
