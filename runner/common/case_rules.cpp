#include "runner/common/case_rules.hpp"

namespace attnsweep {

std::string CasePattern::text() const {
  std::string out;
  const auto add = [&](const char* name, const std::string& glob) {
    if (!glob.empty()) out += std::string(out.empty() ? "" : " ") + name + " " + glob;
  };
  add("case", label);
  add("variant", variant);
  add("shape", shape);
  add("dtype", dtype);
  add("mask", mask);
  add("pass", pass);
  return out.empty() ? "every case" : out;
}

}  // namespace attnsweep
