#include <algorithm>
#include <string>
#include <vector>

#include "runner/report/escaping.hpp"
#include "runner/report/writers.hpp"

namespace attnsweep::report {
namespace {

const std::string kEllipsis = "...";

std::string shorten(const std::string& text, std::size_t max_width) {
  if (max_width == 0 || text.size() <= max_width || max_width <= kEllipsis.size()) return text;
  return text.substr(0, max_width - kEllipsis.size()) + kEllipsis;
}

class TextWriter final : public RowWriter {
 public:
  TextWriter(std::ostream& out, std::size_t sizing_rows) : out_(out), sizing_rows_(sizing_rows) {}

  void begin(const std::vector<Column>& columns) override {
    columns_ = columns;
    for (const Column& column : columns_) header_.push_back(shorten(terminal_safe(column.name), column.max_width));
  }

  void row(const std::vector<Cell>& cells) override {
    if (columns_.empty()) return;
    std::vector<std::string> texts;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      // A stored value may hold ESC sequences or line breaks: shown as escapes, never run by the terminal.
      texts.push_back(shorten(terminal_safe(display_text(cells[i], columns_[i])), columns_[i].max_width));
    }
    if (sized_) {
      write_line(texts);
      return;
    }
    pending_.push_back(std::move(texts));
    if (sizing_rows_ > 0 && pending_.size() >= sizing_rows_) flush();
  }

  void end() override {
    if (!columns_.empty() && !sized_) flush();
  }

 private:
  // Fixes the widths from the header and the rows held so far, and writes them.
  void flush() {
    widths_.assign(header_.size(), 0);
    for (std::size_t i = 0; i < header_.size(); ++i) {
      widths_[i] = header_[i].size();
      for (const auto& texts : pending_) widths_[i] = std::max(widths_[i], texts[i].size());
    }
    sized_ = true;
    write_line(header_);
    for (const auto& texts : pending_) write_line(texts);
    pending_.clear();
  }

  void write_line(const std::vector<std::string>& texts) {
    for (std::size_t i = 0; i < texts.size(); ++i) {
      const bool last = i + 1 == texts.size();
      // A row after the widths were fixed may be wider: it then pushes its line out, never cut further.
      const std::string padding(widths_[i] > texts[i].size() ? widths_[i] - texts[i].size() : 0, ' ');
      if (i > 0) out_ << "  ";
      if (columns_[i].align == Align::right) {
        out_ << padding << texts[i];
      } else {
        out_ << texts[i] << (last ? "" : padding);
      }
    }
    out_ << "\n";
  }

  std::ostream& out_;
  std::size_t sizing_rows_;
  std::vector<Column> columns_;
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> pending_;
  std::vector<std::size_t> widths_;
  bool sized_ = false;
};

}  // namespace

std::unique_ptr<RowWriter> make_text_writer(std::ostream& out, std::size_t sizing_rows) {
  return std::make_unique<TextWriter>(out, sizing_rows);
}

}  // namespace attnsweep::report
