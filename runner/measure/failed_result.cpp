#include "runner/measure/failed_result.hpp"

#include "runner/measure/flops.hpp"

namespace attnsweep {

CaseResult started_result(const Case& c, const Device& device) {
  CaseResult result;
  result.device = device;
  result.flops = pass_flops(c.shape, c.mask, c.pass);
  result.min_bytes = pass_min_bytes(c.shape, c.dtype, c.pass, c.mask);
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
