#pragma once
// An enum spelled by one list of names in declaration order: a value's index is
// its position in the list, so the list is the only place its spellings are
// written (the stored spellings of stop reasons, validity codes, ...).
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace attnsweep {

// The spelling of `value`; std::out_of_range for a value past the list.
template <typename Enum>
const std::string& name_in(const std::vector<std::string>& names, Enum value) {
  return names.at(static_cast<std::size_t>(value));
}

// Every value, in declaration order: one per name.
template <typename Enum>
std::vector<Enum> values_of(const std::vector<std::string>& names) {
  std::vector<Enum> values;
  for (std::size_t i = 0; i < names.size(); ++i) values.push_back(static_cast<Enum>(i));
  return values;
}

// The value spelled `text`, or none when no name of the list is.
template <typename Enum>
std::optional<Enum> value_named(const std::vector<std::string>& names, const std::string& text) {
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] == text) return static_cast<Enum>(i);
  }
  return std::nullopt;
}

}  // namespace attnsweep
