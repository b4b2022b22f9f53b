#include "runner/compare/backend_choice.hpp"

#include <map>

#include "runner/common/text.hpp"

namespace attnsweep::compare {
namespace {

std::string lead_percent(double share) { return text::fixed(100 * share, share < 0.1 ? 1 : 0) + "%"; }

// Every "how much faster" here is one convention, the slower median over the faster less 1 (the lead's):
// a percent below 2x, a factor from 2x up ("19.8x": a 20x gap as a share of time saved, "95%", reads
// like a small one, and as a percent, "1876%", is hard to read).
// The switch is where the percent would print "100%" (from 0.995 up), so no gap prints as both.
constexpr double kFactorFrom = 0.995;

std::string lead_text(double slower_by) {
  return slower_by < kFactorFrom ? lead_percent(slower_by) : text::fixed(1 + slower_by, 1) + "x";
}

// "86% ahead of sdpa_flash", "19.8x as fast as sdpa_cudnn".
std::string ahead_of(double slower_by, const std::string& variant) {
  return lead_text(slower_by) + (slower_by < kFactorFrom ? " ahead of " : " as fast as ") + variant;
}

// "24% faster", "19.8x faster".
std::string faster(double slower_by) { return lead_text(slower_by) + " faster"; }

// PyTorch's backend names as users say them.
std::string backend_name(const std::string& backend) {
  if (backend == "cudnn_attention") return "cuDNN";
  if (backend == "flash_attention") return "flash";
  if (backend == "efficient_attention") return "efficient";
  if (backend == "math") return "math";
  return backend.empty() ? "?" : backend;
}

std::string sentence_of(const ChoiceLine& line) {
  std::string lead;
  if (line.lead_verdict == "alone") {
    lead = line.fastest_variant + " is the only variant timed";
  } else if (line.lead && line.lead_verdict == "significant") {
    lead = line.fastest_variant + " is fastest, " + ahead_of(*line.lead, line.runner_up_variant) + " (significant)";
  } else if (line.lead && line.lead_verdict == "tie") {
    lead = line.fastest_variant + " and " + line.runner_up_variant + " tie (" + lead_text(*line.lead) + ", the intervals overlap)";
  } else if (line.lead) {
    lead = line.fastest_variant + " is " + ahead_of(*line.lead, line.runner_up_variant) +
           " (no confidence intervals to tell whether that is real)";
  }
  if (line.auto_verdict.empty()) return lead;
  const std::string chose = "SDPA chose " + backend_name(line.auto_backend);
  if (line.auto_verdict == "fastest") return chose + ", the fastest variant's backend; " + lead;
  const std::string why = line.auto_verdict == "slower" || line.auto_verdict == "faster" ? "significant"
                          : line.auto_verdict == "tie"                                     ? "a tie: the intervals overlap"
                                                                                           : "no confidence intervals";
  if (!line.auto_slower_by) return chose + " (" + why + "); " + lead;
  const double slower_by = *line.auto_slower_by;  // its median over the fastest variant's, less 1
  if (slower_by <= -1) return chose + " (" + why + "); " + lead;  // no time of its own (a median of 0): no ratio
  if (slower_by < 0) {
    // PyTorch ran something faster than every variant timed: a backend none of them pins, or a better run of one.
    // The fastest variant's median over PyTorch's, less 1: the same convention turned round.
    return chose + ", " + faster(-slower_by / (1 + slower_by)) + " than " + line.fastest_variant +
           ", the fastest variant timed (" + why + "); " + lead;
  }
  return chose + "; " + line.fastest_variant + " is " + faster(slower_by) + " (" + why + ")";
}

}  // namespace

std::vector<ChoiceLine> read_choices(const storage::RunReader& reader, std::int64_t run_id) {
  std::map<std::int64_t, storage::CaseRow> rows;
  for (storage::CaseRow& row : reader.cases(run_id)) rows.emplace(row.case_id, std::move(row));
  std::vector<std::pair<int, ChoiceLine>> ordered;
  for (const storage::ChoiceRow& row : reader.choices(run_id)) {
    ChoiceLine line;
    static_cast<storage::ChoiceRow&>(line) = row;
    const auto found = row.fastest_case_id ? rows.find(*row.fastest_case_id) : rows.end();
    int order = 0;
    if (found != rows.end()) {
      const Case& c = found->second.identity;
      line.group = c.shape.label() + " " + to_string(c.dtype) + " " + c.mask_label() +
                   (c.pass == Pass::forward ? "" : std::string(" ") + to_string(c.pass));
      order = c.plan_index;
    }
    line.sentence = sentence_of(line);
    ordered.emplace_back(order, std::move(line));
  }
  std::stable_sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<ChoiceLine> lines;
  for (auto& [order, line] : ordered) lines.push_back(std::move(line));
  return lines;
}

report::Table choice_table(const std::vector<ChoiceLine>& lines) {
  using report::Align;
  using report::Cell;
  report::Table table;
  table.columns = {{"case group"}, {"fastest"}, {"median", "us", Align::right}, {"runner-up"},
                   {"lead", "", Align::right}, {"lead is"}, {"PyTorch chose"}, {"its median", "us", Align::right},
                   {"verdict"}};
  table.columns.back().max_width = 0;
  for (const ChoiceLine& line : lines) {
    table.add_row({Cell::text(line.group), Cell::text(line.fastest_variant), Cell::real(line.fastest_us, 1),
                   line.runner_up_variant.empty() ? Cell::null() : Cell::text(line.runner_up_variant),
                   line.lead ? Cell::text(lead_text(*line.lead)) : Cell::null(), Cell::text(line.lead_verdict),
                   line.auto_verdict.empty() ? Cell::null() : Cell::text(backend_name(line.auto_backend)),
                   line.auto_us ? Cell::real(*line.auto_us, 1) : Cell::null(), Cell::text(line.sentence)});
  }
  return table;
}

std::vector<ChoiceChange> choice_changes(const std::vector<ChoiceLine>& baseline, const std::vector<ChoiceLine>& candidate) {
  std::map<std::string, const ChoiceLine*> before;
  for (const ChoiceLine& line : baseline) before[line.group_key] = &line;
  std::vector<ChoiceChange> changes;
  for (const ChoiceLine& line : candidate) {
    const auto found = before.find(line.group_key);
    if (found == before.end() || found->second->fastest_variant == line.fastest_variant) continue;
    changes.push_back({line.group, found->second->fastest_variant, line.fastest_variant, found->second->lead_verdict,
                       line.lead_verdict});
  }
  return changes;
}

}  // namespace attnsweep::compare
