#pragma once
// Writers that turn rows of typed cells into one output format each. A command
// builds a Table and calls write_table; `query`, whose result may not fit in
// memory, feeds a RowWriter one row at a time. No command carries its own printer.
#include <cstddef>
#include <memory>
#include <ostream>
#include <vector>

#include "runner/report/format.hpp"
#include "runner/report/table.hpp"

namespace attnsweep::report {

// begin() once, row() for each row, end() once. With no columns nothing is written (JSON: []).
class RowWriter {
 public:
  virtual ~RowWriter() = default;
  virtual void begin(const std::vector<Column>& columns) = 0;
  virtual void row(const std::vector<Cell>& cells) = 0;
  virtual void end() = 0;
};

// The writer of a format:
// - table: aligned columns for a terminal: two spaces between columns, text longer than the column's
//   max_width (80) cut to 77 plus "...", no trailing spaces. Widths come from the first `sizing_rows`
//   rows (0: all rows); later rows keep those widths, so a long result streams.
// - csv: RFC 4180 with a header row; null is an empty field; reals at full precision (%.17g).
// - json: one array of objects keyed by column name in column order, values typed; a repeated name
//   gets a suffix (_2, _3).
// - markdown: a GitHub table; headers carry the unit in parentheses unless the name already ends in it.
std::unique_ptr<RowWriter> make_row_writer(std::ostream& out, Format format, std::size_t sizing_rows = 0);

void write_table(std::ostream& out, const Table& table, Format format);

std::unique_ptr<RowWriter> make_text_writer(std::ostream& out, std::size_t sizing_rows);
std::unique_ptr<RowWriter> make_csv_writer(std::ostream& out);
std::unique_ptr<RowWriter> make_json_writer(std::ostream& out);
std::unique_ptr<RowWriter> make_markdown_writer(std::ostream& out);

}  // namespace attnsweep::report
