#include <cstdio>
#include <memory>
#include <string>

#include "runner/report/writers.hpp"

namespace attnsweep::report {
namespace {

// RFC 4180: quote a field only when it needs it, doubling the quotes inside.
std::string quoted(const std::string& field) {
  if (field.find_first_of(",\"\r\n") == std::string::npos) return field;
  std::string out = "\"";
  for (const char c : field) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string field(const Cell& cell) {
  if (cell.kind() != CellKind::real) return quoted(cell.to_text());
  // The display digits are for people; a CSV is read back by programs, so keep every bit.
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.17g", cell.as_real());
  return buffer;
}

class CsvWriter final : public RowWriter {
 public:
  explicit CsvWriter(std::ostream& out) : out_(out) {}
  void begin(const std::vector<Column>& columns) override {
    columns_ = columns.size();
    if (columns.empty()) return;
    for (std::size_t i = 0; i < columns.size(); ++i) out_ << (i > 0 ? "," : "") << quoted(columns[i].name);
    out_ << "\n";
  }
  void row(const std::vector<Cell>& cells) override {
    if (columns_ == 0) return;
    for (std::size_t i = 0; i < cells.size(); ++i) out_ << (i > 0 ? "," : "") << field(cells[i]);
    out_ << "\n";
  }
  void end() override {}

 private:
  std::ostream& out_;
  std::size_t columns_ = 0;
};

}  // namespace

std::unique_ptr<RowWriter> make_csv_writer(std::ostream& out) { return std::make_unique<CsvWriter>(out); }

}  // namespace attnsweep::report
