// `attnsweep query`: one read-only SQL statement, printed in the chosen format.
#include <iostream>

#include "runner/cli/commands.hpp"
#include "runner/cli/guarded.hpp"
#include "runner/report/format.hpp"
#include "runner/report/query_table.hpp"
#include "runner/report/writers.hpp"
#include "storage/query.hpp"

namespace attnsweep::cli {

int query_command(const QueryOptions& options) {
  return guarded("error: ", [&] {
    const report::Format format = report::parse_format(options.format);
    const auto result = storage::run_query(options.db_path, options.sql);
    report::write_table(std::cout, report::query_table(result), format);
    return static_cast<int>(kExitOk);
  });
}

}  // namespace attnsweep::cli
