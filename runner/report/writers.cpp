#include "runner/report/writers.hpp"

namespace attnsweep::report {

std::unique_ptr<RowWriter> make_row_writer(std::ostream& out, Format format, std::size_t sizing_rows) {
  switch (format) {
    case Format::table: return make_text_writer(out, sizing_rows);
    case Format::csv: return make_csv_writer(out);
    case Format::json: return make_json_writer(out);
    case Format::markdown: return make_markdown_writer(out);
  }
  return make_text_writer(out, sizing_rows);
}

void write_table(std::ostream& out, const Table& table, Format format) {
  const auto writer = make_row_writer(out, format);
  writer->begin(table.columns);
  for (const auto& row : table.rows) writer->row(row);
  writer->end();
}

}  // namespace attnsweep::report
