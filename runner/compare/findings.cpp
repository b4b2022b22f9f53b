#include "runner/compare/findings.hpp"

#include "runner/common/enum_names.hpp"

namespace attnsweep::compare {
namespace {

const std::vector<std::string>& check_names() {  // in declaration order
  static const std::vector<std::string> names = {"status", "counts", "backend", "numerics", "time", "energy", "validity", "dram_bytes"};
  return names;
}

}  // namespace

const char* to_string(Check check) { return name_in(check_names(), check).c_str(); }

const std::vector<Check>& checks() {
  static const std::vector<Check> all = values_of<Check>(check_names());
  return all;
}

const char* to_string(Severity severity) {
  static const std::vector<std::string> names = {"regression", "improvement", "info"};  // in declaration order
  return name_in(names, severity).c_str();
}

}  // namespace attnsweep::compare
