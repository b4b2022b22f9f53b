#include <cstdio>
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

}  // namespace

void write_csv(std::ostream& out, const Table& table) {
  if (table.columns.empty()) return;
  for (std::size_t i = 0; i < table.columns.size(); ++i) out << (i > 0 ? "," : "") << quoted(table.columns[i].name);
  out << "\n";
  for (const auto& row : table.rows) {
    for (std::size_t i = 0; i < row.size(); ++i) out << (i > 0 ? "," : "") << field(row[i]);
    out << "\n";
  }
}

}  // namespace attnsweep::report
