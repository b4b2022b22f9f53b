#include "runner/report/table.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <utility>

namespace attnsweep::report {
namespace {

// snprintf into a string sized by a first measuring call, so large fixed-point values are never cut.
std::string format_double(const char* format, int precision, double value) {
  const int length = std::snprintf(nullptr, 0, format, precision, value);
  std::string out(static_cast<std::size_t>(length) + 1, '\0');
  std::snprintf(out.data(), out.size(), format, precision, value);
  out.resize(static_cast<std::size_t>(length));
  return out;
}

// SQLite prints a REAL with "%!.15g": like "%.15g", but the mantissa always keeps a decimal point and a digit
// after it, so 1.0 reads "1.0" and 1e20 "1.0e+20". `attnsweep query` has always shown that text.
std::string sqlite_real_text(double value) {
  std::string out = format_double("%.*g", 15, value);
  const std::size_t mantissa_end = std::min(out.find('e'), out.size());
  if (out.find('.') >= mantissa_end) out.insert(mantissa_end, ".0");
  return out;
}

const char* kind_name(CellKind kind) {
  switch (kind) {
    case CellKind::null: return "null";
    case CellKind::integer: return "integer";
    case CellKind::real: return "real";
    case CellKind::text: return "text";
  }
  return "unknown";
}

void expect_kind(const Cell& cell, CellKind wanted) {
  if (cell.kind() != wanted) {
    throw std::logic_error(std::string("cell holds ") + kind_name(cell.kind()) + ", not " + kind_name(wanted));
  }
}

}  // namespace

Cell Cell::null() { return Cell(); }

Cell Cell::integer(std::int64_t value) {
  Cell cell;
  cell.value_ = value;
  return cell;
}

Cell Cell::real(double value, int digits) {
  Cell cell;
  if (std::isfinite(value)) cell.value_ = value;
  cell.digits_ = digits;
  return cell;
}

Cell Cell::text(std::string value) {
  Cell cell;
  cell.value_ = std::move(value);
  return cell;
}

CellKind Cell::kind() const {
  // The variant's alternatives are declared in CellKind's order.
  return static_cast<CellKind>(value_.index());
}

std::int64_t Cell::as_integer() const {
  expect_kind(*this, CellKind::integer);
  return std::get<std::int64_t>(value_);
}

double Cell::as_real() const {
  expect_kind(*this, CellKind::real);
  return std::get<double>(value_);
}

const std::string& Cell::as_text() const {
  expect_kind(*this, CellKind::text);
  return std::get<std::string>(value_);
}

std::string Cell::to_text() const {
  switch (kind()) {
    case CellKind::null: return "";
    case CellKind::integer: return std::to_string(as_integer());
    case CellKind::real: return digits_ >= 0 ? format_double("%.*f", digits_, as_real()) : sqlite_real_text(as_real());
    case CellKind::text: return as_text();
  }
  return "";
}

void Table::add_row(std::vector<Cell> row) {
  if (row.size() != columns.size()) {
    throw std::invalid_argument("row has " + std::to_string(row.size()) + " cells; the table has " +
                                std::to_string(columns.size()) + " columns");
  }
  rows.push_back(std::move(row));
}

std::string display_text(const Cell& cell, const Column& column) {
  return cell.is_null() ? column.null_text : cell.to_text();
}

}  // namespace attnsweep::report
