#include "runner/compare/case_key.hpp"

#include "runner/plan/case_axes.hpp"

namespace attnsweep::compare {

CaseKey::CaseKey(const Case& c, DeviceKind kind) : Case(c), device_kind(kind) {
  plan_index = 0;  // neither tells one measurement from another
  where = {};
}

CaseKey::CaseKey(std::string variant_in, Shape shape_in, Dtype dtype_in, Mask mask_in, DeviceKind kind, Pass pass_in,
                 ScoreMod scores_in, bool deterministic_in)
    : device_kind(kind) {
  variant = std::move(variant_in);
  shape = std::move(shape_in);
  dtype = dtype_in;
  mask = mask_in;
  pass = pass_in;
  scores = std::move(scores_in);
  deterministic = deterministic_in;
}

CaseKey CaseKey::of(const storage::CaseRow& row) { return CaseKey(row.identity, row.device.kind()); }

std::string CaseKey::label() const { return Case::label() + (device_kind == DeviceKind::cuda ? " cuda" : " cpu"); }

bool CaseKey::operator<(const CaseKey& other) const {
  const int order = measurement_order(*this, other);
  return order != 0 ? order < 0 : device_kind < other.device_kind;
}

bool CaseKey::operator==(const CaseKey& other) const {
  return device_kind == other.device_kind && measurement_order(*this, other) == 0;
}

}  // namespace attnsweep::compare
