#include "runner/report/query_table.hpp"

#include <cmath>
#include <type_traits>

namespace attnsweep::report {

std::vector<Column> query_columns(const std::vector<std::string>& names) {
  std::vector<Column> columns;
  for (const auto& name : names) columns.push_back({name, "", Align::left, "NULL"});
  return columns;
}

std::vector<Cell> query_cells(const std::vector<storage::QueryValue>& values) {
  std::vector<Cell> cells;
  cells.reserve(values.size());
  for (const auto& value : values) {
    cells.push_back(std::visit(
        [](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, std::monostate>) return Cell::null();
          if constexpr (std::is_same_v<T, std::int64_t>) return Cell::integer(v);
          if constexpr (std::is_same_v<T, double>) {
            // As SQLite prints it; SQLite stores no NaN, and spells infinities Inf and -Inf.
            if (std::isinf(v)) return Cell::text(v > 0 ? "Inf" : "-Inf");
            return Cell::real(v, -1);
          }
          if constexpr (std::is_same_v<T, std::string>) return Cell::text(v);
        },
        value));
  }
  return cells;
}

}  // namespace attnsweep::report
