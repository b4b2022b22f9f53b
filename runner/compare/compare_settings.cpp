#include "runner/compare/compare_settings.hpp"

#include "runner/common/numerics.hpp"
#include "runner/compare/case_rule_match.hpp"

namespace attnsweep::compare {

double CompareSettings::tolerance(Dtype dtype) const {
  switch (dtype) {
    case Dtype::bf16: return bf16_tolerance;
    case Dtype::fp16: return fp16_tolerance;
    case Dtype::fp32: return fp32_tolerance;
    case Dtype::fp8_e4m3:
    case Dtype::fp8_e5m2: return numerics_bound(dtype);  // no flag of its own: the run's bound
  }
  return fp32_tolerance;
}

const CaseRule* CompareSettings::rule_for(const CaseKey& key) const {
  for (const CaseRule& rule : rules) {
    if (matches(rule.cases, key)) return &rule;
  }
  return nullptr;
}

CompareSettings CompareSettings::for_case(const CaseKey& key) const {
  CompareSettings own = *this;
  own.rules.clear();  // a case's settings need none: they are its own already
  if (const CaseRule* rule = rule_for(key); rule && rule->threshold) own.threshold = *rule->threshold;
  return own;
}

}  // namespace attnsweep::compare
