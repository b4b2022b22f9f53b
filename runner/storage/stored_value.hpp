#pragma once
// A value as SQLite stores it, and how the printers show it: SQLite-free, so
// that the output layer can pick a stored column by name (case_row.hpp's
// case_value) without seeing the database library.
#include <cstdint>
#include <string>
#include <variant>

namespace attnsweep::storage {

// std::monostate is NULL.
using Value = std::variant<std::monostate, std::int64_t, double, std::string>;

// How a column's value is shown by the printers that pick it by name (the
// end-of-run table, the report): its unit and its digits. nvbench keeps these
// hints on the summary where the value is made; here on the column.
struct Display {
  enum class Style {
    as_is,        // as the number prints
    fixed,        // `digits` decimals: 812.3
    scientific,   // "2.0e-03" with `digits` decimals, for errors
    significant,  // `digits` significant digits: joules from millijoules to whole ones
  };
  std::string unit;  // "us", "TFLOP/s", "GB/s", "J"; "" for a count or a ratio
  Style style = Style::as_is;
  int digits = 0;
};

// A stored value with its display, for a printer.
struct Shown {
  Value value;
  Display display;
};

}  // namespace attnsweep::storage
