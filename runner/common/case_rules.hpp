#pragma once
// Rules that pick cases by pattern (issue 38; docs/reproducibility.md, "Per-case
// rules" and "Accepting a change"): a nightly config's thresholds and ignore
// list, and the cases an accepted change names. Each field is a shell glob
// (fnmatch: `*`, `?`, `[...]`); an empty field matches everything, and a
// pattern matches a case when every field it gives does. The matching is
// compare's (runner/compare/case_rule_match.hpp), which knows a case's key.
#include <optional>
#include <string>
#include <vector>

namespace attnsweep {

struct CasePattern {
  std::string label;    // the whole label, as summaries print it: "sdpa_flash 8x16x1024x64 bf16 causal backward cuda"
  std::string variant;  // "sdpa_*"
  std::string shape;    // the shape's label: "8x16x1024x64", "1x32/8x*x128"
  std::string dtype;    // "bf16"
  std::string mask;     // the mask's label: "causal", "full", "causal window 1023/0"
  std::string pass;     // forward, backward, forward_backward

  bool empty() const { return label.empty() && variant.empty() && shape.empty() && dtype.empty() && mask.empty() && pass.empty(); }
  std::string text() const;  // "variant sdpa_* dtype bf16", for messages and summaries
};

// A nightly config's per-case rule: the first rule whose pattern matches a case applies.
struct CaseRule {
  CasePattern cases;
  std::optional<double> threshold;  // a share (0.08 for 8%): this case's --threshold
  std::string ignore;               // non-empty: the case is not judged, for this reason
  std::string where;                // "nightly.yaml:12:5", for messages
};

}  // namespace attnsweep
