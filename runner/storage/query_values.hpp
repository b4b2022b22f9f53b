#pragma once
// A value of run_query's rows (query.hpp) as text or as a number: the readers
// of views (the claims, the backend choice) take their columns this way.
#include <cstdint>
#include <optional>
#include <string>

#include "runner/storage/query.hpp"

namespace attnsweep::storage {

// TEXT as is, an INTEGER in decimal; "" for NULL and REAL.
inline std::string query_text(const QueryValue& value) {
  if (const auto* text = std::get_if<std::string>(&value)) return *text;
  if (const auto* integer = std::get_if<std::int64_t>(&value)) return std::to_string(*integer);
  return "";
}

// A REAL or INTEGER; nothing for NULL and TEXT.
inline std::optional<double> query_real(const QueryValue& value) {
  if (const auto* real = std::get_if<double>(&value)) return *real;
  if (const auto* integer = std::get_if<std::int64_t>(&value)) return static_cast<double>(*integer);
  return std::nullopt;
}

}  // namespace attnsweep::storage
