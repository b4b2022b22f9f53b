#include "runner/measure/failed_result.hpp"

#include "runner/measure/flops.hpp"

namespace attnsweep {

CaseResult started_result(const Case& c, const Device& device) {
  CaseResult result;
  result.device = device;
  result.flops = forward_flops(c.shape, c.causal);
  result.min_bytes = forward_min_bytes(c.shape, c.dtype);
  return result;
}

CaseResult failed_result(const Case& c, const Device& device, CaseStatus status, const std::string& message,
                         const PhaseSeconds& phases) {
  CaseResult result = started_result(c, device);
  result.status = status;
  result.error_message = message;
  result.phases = phases;
  return result;
}

}  // namespace attnsweep
