#include "runner/compare/compare_settings.hpp"

namespace attnsweep::compare {

double CompareSettings::tolerance(Dtype dtype) const {
  switch (dtype) {
    case Dtype::bf16: return bf16_tolerance;
    case Dtype::fp16: return fp16_tolerance;
    case Dtype::fp32: return fp32_tolerance;
  }
  return fp32_tolerance;
}

}  // namespace attnsweep::compare
