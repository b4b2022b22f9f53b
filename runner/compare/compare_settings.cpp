#include "runner/compare/compare_settings.hpp"

#include "runner/common/numerics.hpp"

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

}  // namespace attnsweep::compare
