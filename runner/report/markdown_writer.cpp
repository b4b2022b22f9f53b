#include <cctype>
#include <string>

#include "runner/report/writers.hpp"

namespace attnsweep::report {
namespace {

// A pipe would end the cell and a line break the row.
std::string escaped(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '|') {
      out += "\\|";
    } else if (c == '\r' || c == '\n') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;  // CRLF is one line break
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

// "gpu_time_us" already says "us"; "status" does not, though it ends in the same letters.
bool names_unit(const std::string& name, const std::string& unit) {
  if (name.size() < unit.size() || name.compare(name.size() - unit.size(), unit.size(), unit) != 0) return false;
  if (name.size() == unit.size()) return true;
  return !std::isalnum(static_cast<unsigned char>(name[name.size() - unit.size() - 1]));
}

std::string header_text(const Column& column) {
  if (column.unit.empty() || names_unit(column.name, column.unit)) return column.name;
  return column.name + " (" + column.unit + ")";
}

}  // namespace

void write_markdown(std::ostream& out, const Table& table) {
  if (table.columns.empty()) return;
  out << "|";
  for (const Column& column : table.columns) out << " " << escaped(header_text(column)) << " |";
  out << "\n|";
  for (const Column& column : table.columns) out << (column.align == Align::right ? " ---: |" : " --- |");
  out << "\n";
  for (const auto& row : table.rows) {
    out << "|";
    for (std::size_t i = 0; i < row.size(); ++i) out << " " << escaped(display_text(row[i], table.columns[i])) << " |";
    out << "\n";
  }
}

}  // namespace attnsweep::report
