#include <nlohmann/json.hpp>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "runner/report/writers.hpp"

namespace attnsweep::report {
namespace {

nlohmann::ordered_json value(const Cell& cell) {
  switch (cell.kind()) {
    case CellKind::null: return nullptr;
    case CellKind::integer: return cell.as_integer();
    case CellKind::real: return cell.as_real();  // nlohmann prints the shortest text that round-trips
    case CellKind::text: return cell.as_text();
  }
  return nullptr;
}

// Object keys: the column names, a repeated one suffixed _2, _3, ... (SELECT a.id, b.id) so no value is lost.
std::vector<std::string> unique_keys(const std::vector<Column>& columns) {
  std::vector<std::string> keys;
  for (const auto& column : columns) {
    std::string key = column.name;
    for (int n = 2; std::find(keys.begin(), keys.end(), key) != keys.end(); ++n) key = column.name + "_" + std::to_string(n);
    keys.push_back(key);
  }
  return keys;
}

// Each row is dumped on its own, so a long result streams; the layout is the
// same as dumping the whole array with an indent of 2.
class JsonWriter final : public RowWriter {
 public:
  explicit JsonWriter(std::ostream& out) : out_(out) {}
  void begin(const std::vector<Column>& columns) override { keys_ = unique_keys(columns); }
  void row(const std::vector<Cell>& cells) override {
    nlohmann::ordered_json object = nlohmann::ordered_json::object();  // keeps the keys in column order
    for (std::size_t i = 0; i < cells.size(); ++i) object[keys_[i]] = value(cells[i]);
    // Text read from a database need not be valid UTF-8; replace bad bytes (U+FFFD) rather than fail.
    std::string text = object.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
    std::string indented = "  ";
    for (const char c : text) {
      indented += c;
      if (c == '\n') indented += "  ";
    }
    out_ << (rows_++ == 0 ? "[\n" : ",\n") << indented;
  }
  void end() override { out_ << (rows_ == 0 ? "[]\n" : "\n]\n"); }

 private:
  std::ostream& out_;
  std::vector<std::string> keys_;
  std::size_t rows_ = 0;
};

}  // namespace

std::unique_ptr<RowWriter> make_json_writer(std::ostream& out) { return std::make_unique<JsonWriter>(out); }

}  // namespace attnsweep::report
