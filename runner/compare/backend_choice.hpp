#pragma once
// Which backend to pick (issue 37; the choice view, docs/schema.md): per case
// group of a run (shape, dtype, mask, score modifications, determinism, pass),
// the fastest variant, whether its lead is real (the medians' 95% confidence
// intervals apart) and PyTorch's own choice (sdpa_auto) against it, in a
// sentence: "SDPA chose cuDNN; sdpa_flash is 12% faster (significant)".
// Read by `attnsweep report` and `compare`; LibTorch-free.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runner/report/table.hpp"
#include "runner/storage/run_reader.hpp"

namespace attnsweep::compare {

// A case group as the choice view gives it (storage::ChoiceRow: group_key is equal for the
// same group in two runs; lead_verdict significant, tie, alone or unknown; auto_verdict fastest,
// slower, tie or unknown, empty when sdpa_auto did not run), named and said in a sentence.
struct ChoiceLine : storage::ChoiceRow {
  std::string group;  // "1x64/8x16384x128 bf16 causal", " backward" after it for that pass
  std::string sentence;
};

// The run's groups, in the plan order of their fastest case.
std::vector<ChoiceLine> read_choices(const storage::RunReader& reader, std::int64_t run_id);

// group, fastest, lead, runner-up, PyTorch's choice, the sentence.
report::Table choice_table(const std::vector<ChoiceLine>& lines);

// A group whose fastest variant differs between two runs (compare flags it).
struct ChoiceChange {
  std::string group;
  std::string baseline_fastest, candidate_fastest;
  std::string baseline_lead, candidate_lead;  // lead verdicts
  bool significant() const { return baseline_lead == "significant" && candidate_lead == "significant"; }
};
std::vector<ChoiceChange> choice_changes(const std::vector<ChoiceLine>& baseline, const std::vector<ChoiceLine>& candidate);

}  // namespace attnsweep::compare
