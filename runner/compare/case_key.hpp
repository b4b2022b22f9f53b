#pragma once
// What makes two cases of two runs the same measurement (docs/compare.md,
// "What is compared"): compare matches by it, nightly keys its nights by it,
// history draws a line per key. A case's axes (runner/plan/case_axes.hpp) and
// the kind of device; the GPU's index, the plan index and the case id are left
// out on purpose, so a run on cuda:1 matches one on cuda:0.
#include <string>
#include <utility>

#include "runner/common/identities.hpp"
#include "runner/plan/case.hpp"
#include "runner/storage/run_reader.hpp"

namespace attnsweep::compare {

// A case without its plan index and source location, on a kind of device (cpu or cuda; not its index).
struct CaseKey : Case {
  DeviceKind device_kind = DeviceKind::cpu;

  CaseKey() = default;
  CaseKey(const Case& c, DeviceKind kind);
  CaseKey(std::string variant, Shape shape, Dtype dtype, Mask mask, DeviceKind kind, Pass pass, ScoreMod scores = {},
          bool deterministic = false);

  static CaseKey of(const storage::CaseRow& row);
  std::string label() const;  // "sdpa_flash 8x16x1024x64 bf16 causal cuda"; "... causal backward cuda"
  // In the axes' order, then the device's kind.
  bool operator<(const CaseKey& other) const;
  bool operator==(const CaseKey& other) const;
};

}  // namespace attnsweep::compare
