#include "runner/compare/case_rule_match.hpp"

#include <fnmatch.h>

namespace attnsweep::compare {
namespace {

bool glob(const std::string& pattern, const std::string& text) {
  return pattern.empty() || ::fnmatch(pattern.c_str(), text.c_str(), 0) == 0;
}

}  // namespace

bool matches(const CasePattern& pattern, const CaseKey& key) {
  return glob(pattern.label, key.label()) && glob(pattern.variant, key.variant) && glob(pattern.shape, key.shape.label()) &&
         glob(pattern.dtype, to_string(key.dtype)) && glob(pattern.mask, key.mask.label()) &&
         glob(pattern.pass, to_string(key.pass));
}

}  // namespace attnsweep::compare
