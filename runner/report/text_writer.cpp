#include <algorithm>
#include <string>
#include <vector>

#include "runner/report/writers.hpp"

namespace attnsweep::report {
namespace {

const std::string kEllipsis = "...";

std::string shorten(const std::string& text, std::size_t max_width) {
  if (max_width == 0 || text.size() <= max_width || max_width <= kEllipsis.size()) return text;
  return text.substr(0, max_width - kEllipsis.size()) + kEllipsis;
}

void write_line(std::ostream& out, const Table& table, const std::vector<std::string>& texts,
                const std::vector<std::size_t>& widths) {
  for (std::size_t i = 0; i < texts.size(); ++i) {
    const bool last = i + 1 == texts.size();
    const std::string padding(widths[i] - texts[i].size(), ' ');
    if (i > 0) out << "  ";
    if (table.columns[i].align == Align::right) {
      out << padding << texts[i];
    } else {
      out << texts[i] << (last ? "" : padding);
    }
  }
  out << "\n";
}

}  // namespace

void write_text(std::ostream& out, const Table& table) {
  if (table.columns.empty()) return;
  std::vector<std::string> header;
  for (const Column& column : table.columns) header.push_back(shorten(column.name, column.max_width));
  std::vector<std::vector<std::string>> lines;
  for (const auto& row : table.rows) {
    std::vector<std::string> texts;
    for (std::size_t i = 0; i < row.size(); ++i) texts.push_back(shorten(display_text(row[i], table.columns[i]), table.columns[i].max_width));
    lines.push_back(std::move(texts));
  }
  std::vector<std::size_t> widths(header.size());
  for (std::size_t i = 0; i < header.size(); ++i) {
    widths[i] = header[i].size();
    for (const auto& texts : lines) widths[i] = std::max(widths[i], texts[i].size());
  }
  write_line(out, table, header, widths);
  for (const auto& texts : lines) write_line(out, table, texts, widths);
}

}  // namespace attnsweep::report
