#pragma once
// One case group of a run as the choice view gives it (issue 37; docs/schema.md
// "choice"): the fastest variant, the runner-up and PyTorch's own choice. Read
// as the view's readers always took it: NULL text as "", a number that is not
// one as none.
#include <cstdint>
#include <optional>
#include <string>

namespace attnsweep::storage {

struct ChoiceRow {
  std::string group_key;
  std::optional<std::int64_t> fastest_case_id;
  std::string fastest_variant, fastest_backend, fastest_validity;
  double fastest_us = 0;  // 0 when the view gives none
  std::optional<double> fastest_ci_rel;
  int variants_timed = 0;
  std::string runner_up_variant;
  std::optional<double> runner_up_us, lead;
  std::string lead_verdict;
  std::string auto_backend, auto_verdict;
  std::optional<double> auto_us, auto_slower_by;
};

}  // namespace attnsweep::storage
