#include <nlohmann/json.hpp>

#include <algorithm>
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

}  // namespace

void write_json(std::ostream& out, const Table& table) {
  // ordered_json keeps the keys in column order rather than sorting them.
  const std::vector<std::string> keys = unique_keys(table.columns);
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const auto& row : table.rows) {
    nlohmann::ordered_json object = nlohmann::ordered_json::object();
    for (std::size_t i = 0; i < row.size(); ++i) object[keys[i]] = value(row[i]);
    rows.push_back(std::move(object));
  }
  // Text read from a database need not be valid UTF-8; replace bad bytes (U+FFFD) rather than fail the output.
  out << rows.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
}

}  // namespace attnsweep::report
