#include "runner/common/numerics.hpp"

namespace attnsweep {

const char* to_string(NumericsVerdict verdict) {
  switch (verdict) {
    case NumericsVerdict::ok: return "ok";
    case NumericsVerdict::beyond_bound: return "beyond_bound";
    case NumericsVerdict::nonfinite: return "nonfinite";
  }
  return "ok";
}

std::optional<NumericsVerdict> parse_numerics_verdict(const std::string& text) {
  for (const auto verdict : {NumericsVerdict::ok, NumericsVerdict::beyond_bound, NumericsVerdict::nonfinite}) {
    if (text == to_string(verdict)) return verdict;
  }
  return std::nullopt;
}

double numerics_bound(Dtype dtype) {
  switch (dtype) {
    case Dtype::bf16: return 1.6e-2;
    case Dtype::fp16: return 2e-3;
    case Dtype::fp32: return 1e-4;
  }
  return 1e-4;
}

NumericsVerdict judge_numerics(const std::optional<double>& rel_error, Dtype dtype) {
  if (!rel_error) return NumericsVerdict::nonfinite;
  return *rel_error <= numerics_bound(dtype) ? NumericsVerdict::ok : NumericsVerdict::beyond_bound;
}

}  // namespace attnsweep
