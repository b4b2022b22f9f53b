#include "runner/report/writers.hpp"

namespace attnsweep::report {

void write_table(std::ostream& out, const Table& table, Format format) {
  switch (format) {
    case Format::table: return write_text(out, table);
    case Format::csv: return write_csv(out, table);
    case Format::json: return write_json(out, table);
    case Format::markdown: return write_markdown(out, table);
  }
}

}  // namespace attnsweep::report
