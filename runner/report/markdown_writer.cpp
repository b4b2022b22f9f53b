#include <cctype>
#include <memory>
#include <string>

#include "runner/report/escaping.hpp"
#include "runner/report/writers.hpp"

namespace attnsweep::report {
namespace {

// Stored text as inline Markdown (escaping.hpp); a pipe would end the cell.
std::string escaped(const std::string& text) {
  std::string out;
  for (const char c : markdown_inline(text)) {
    if (c == '|') out += '\\';
    out += c;
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

class MarkdownWriter final : public RowWriter {
 public:
  explicit MarkdownWriter(std::ostream& out) : out_(out) {}
  void begin(const std::vector<Column>& columns) override {
    columns_ = columns;
    if (columns_.empty()) return;
    out_ << "|";
    for (const Column& column : columns_) out_ << " " << escaped(header_text(column)) << " |";
    out_ << "\n|";
    for (const Column& column : columns_) out_ << (column.align == Align::right ? " ---: |" : " --- |");
    out_ << "\n";
  }
  void row(const std::vector<Cell>& cells) override {
    if (columns_.empty()) return;
    out_ << "|";
    for (std::size_t i = 0; i < cells.size(); ++i) out_ << " " << escaped(display_text(cells[i], columns_[i])) << " |";
    out_ << "\n";
  }
  void end() override {}

 private:
  std::ostream& out_;
  std::vector<Column> columns_;
};

}  // namespace

std::unique_ptr<RowWriter> make_markdown_writer(std::ostream& out) { return std::make_unique<MarkdownWriter>(out); }

}  // namespace attnsweep::report
