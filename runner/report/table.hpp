#pragma once
// A table of typed cells: what every command that prints results builds, so that one set of
// writers (runner/report/writers.hpp) turns it into text, CSV, JSON or Markdown.
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace attnsweep::report {

enum class Align { left, right };

struct Column {
  std::string name;
  // Metadata such as "us", "TFLOP/s", "bytes"; empty for none. Initialized so that {"name"} compiles without
  // -Wmissing-field-initializers.
  std::string unit = "";
  Align align = Align::left;
  std::string null_text = "-";  // what the human-facing writers (text, Markdown) show for a null cell
  // The text writer cuts longer cells (and the header) to max_width - 3 characters plus "...", so one long value
  // (an error message, SQL text) cannot push every other column off screen; 0: never cut.
  std::size_t max_width = 80;
};

enum class CellKind { null, integer, real, text };

class Cell {
 public:
  static Cell null();
  static Cell integer(std::int64_t value);
  // digits >= 0: fixed with that many decimals in text outputs; digits < 0: SQLite's own text of a REAL
  // (printf "%.15g" with a ".0" kept, "1.0", "1.0e+20"). A NaN or infinity becomes a null cell: no output
  // format has a portable spelling for it.
  static Cell real(double value, int digits);
  static Cell text(std::string value);

  CellKind kind() const;
  bool is_null() const { return kind() == CellKind::null; }
  // Each throws std::logic_error when the cell holds another kind.
  std::int64_t as_integer() const;
  double as_real() const;
  const std::string& as_text() const;
  int digits() const { return digits_; }

  // The display text; a null cell gives "" (writers substitute the column's null_text).
  std::string to_text() const;

 private:
  Cell() = default;
  std::variant<std::monostate, std::int64_t, double, std::string> value_;
  int digits_ = -1;
};

struct Table {
  std::vector<Column> columns;
  std::vector<std::vector<Cell>> rows;

  // Throws std::invalid_argument when the row's width differs from the column count.
  void add_row(std::vector<Cell> row);
};

// The text a human-facing writer shows for a cell: its to_text(), or the column's null_text when null.
std::string display_text(const Cell& cell, const Column& column);

}  // namespace attnsweep::report
