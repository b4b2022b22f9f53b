#include "runner/report/query_table.hpp"

#include <type_traits>

namespace attnsweep::report {

Table query_table(const storage::QueryResult& result) {
  Table table;
  for (const auto& name : result.columns) table.columns.push_back({name, "", Align::left, "NULL"});
  for (const auto& values : result.rows) {
    std::vector<Cell> row;
    for (const auto& value : values) {
      row.push_back(std::visit(
          [](const auto& v) {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, std::monostate>) return Cell::null();
            if constexpr (std::is_same_v<T, std::int64_t>) return Cell::integer(v);
            if constexpr (std::is_same_v<T, double>) return Cell::real(v, -1);  // as SQLite prints it
            if constexpr (std::is_same_v<T, std::string>) return Cell::text(v);
          },
          value));
    }
    table.add_row(std::move(row));
  }
  return table;
}

}  // namespace attnsweep::report
