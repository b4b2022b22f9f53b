#include "runner/compare/findings.hpp"

namespace attnsweep::compare {

const char* to_string(Check check) {
  switch (check) {
    case Check::status: return "status";
    case Check::counts: return "counts";
    case Check::backend: return "backend";
    case Check::numerics: return "numerics";
    case Check::time: return "time";
    case Check::energy: return "energy";
    case Check::validity: return "validity";
  }
  return "?";
}

const std::vector<Check>& checks() {
  static const std::vector<Check> all = {Check::status, Check::counts, Check::backend, Check::numerics, Check::time,
                                         Check::energy, Check::validity};
  return all;
}

const char* to_string(Severity severity) {
  switch (severity) {
    case Severity::regression: return "regression";
    case Severity::improvement: return "improvement";
    case Severity::info: return "info";
  }
  return "?";
}

}  // namespace attnsweep::compare
