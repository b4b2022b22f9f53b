#include "runner/report/format.hpp"

#include "runner/common/errors.hpp"

namespace attnsweep::report {

const std::vector<std::string>& format_names() {
  // Indexed by Format's value.
  static const std::vector<std::string> names = {"table", "csv", "json", "markdown"};
  return names;
}

Format parse_format(const std::string& name) {
  const std::vector<std::string>& names = format_names();
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) return static_cast<Format>(i);
  }
  std::string allowed;
  for (std::size_t i = 0; i < names.size(); ++i) allowed += (i > 0 ? ", " : "") + names[i];
  throw BadInputError("unknown format '" + name + "'; allowed: " + allowed);
}

std::string to_string(Format format) { return format_names().at(static_cast<std::size_t>(format)); }

}  // namespace attnsweep::report
