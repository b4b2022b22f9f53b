// `attnsweep query`: one read-only SQL statement, its rows streamed in the chosen format.
#include <iostream>

#include "runner/cli/commands.hpp"
#include "runner/cli/guarded.hpp"
#include "runner/report/format.hpp"
#include "runner/report/query_table.hpp"
#include "runner/report/writers.hpp"
#include "runner/storage/query.hpp"

namespace attnsweep::cli {
namespace {

// The text format sizes its columns by this many rows, then streams the rest.
constexpr std::size_t kSizingRows = 1000;

}  // namespace

int query_command(const QueryOptions& options) {
  return guarded("error: ", [&] {
    const report::Format format = report::parse_format(options.format);
    const auto writer = report::make_row_writer(std::cout, format, kSizingRows);
    bool begun = false;
    storage::run_query(
        options.db_path, options.sql,
        [&](const std::vector<std::string>& names) {
          writer->begin(report::query_columns(names));
          begun = true;
        },
        [&](const std::vector<storage::QueryValue>& values) { writer->row(report::query_cells(values)); });
    if (begun) writer->end();
    return static_cast<int>(kExitOk);
  });
}

}  // namespace attnsweep::cli
