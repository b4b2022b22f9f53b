#include "runner/workflows/nightly_json.hpp"

#include <nlohmann/json.hpp>

#include <cmath>

#include "runner/compare/comparison_json.hpp"

namespace attnsweep::workflows {
namespace {

using Json = nlohmann::ordered_json;

Json number_or_null(const std::optional<double>& value) {
  return value && std::isfinite(*value) ? Json(*value) : Json(nullptr);
}

// The case's label of a "label: why" line (watch and suspect items).
bool line_of(const std::string& line, const std::string& label) {
  return line.size() > label.size() && line.compare(0, label.size(), label) == 0 && line[label.size()] == ':';
}

// One flagged case: why it is flagged (each of its regressions, its watch line,
// its suspect or unjudged reason) and its two medians.
Json flagged_case(const compare::CaseComparison& c, const NightlyOutcome& outcome) {
  Json reasons = Json::array();
  std::string kind;
  for (const compare::Finding& finding : c.findings) {
    if (finding.severity != compare::Severity::regression) continue;
    kind = "regression";
    reasons.push_back(Json{{"check", compare::to_string(finding.check)},
                           {"field", finding.field},
                           {"baseline", finding.baseline},
                           {"tonight", finding.candidate},
                           {"detail", finding.detail}});
  }
  const std::string label = c.key.label();
  const auto add_lines = [&](const std::vector<std::string>& lines, const char* named) {
    for (const std::string& line : lines) {
      if (!line_of(line, label)) continue;
      if (kind.empty()) kind = named;
      reasons.push_back(Json{{"check", named}, {"detail", line.substr(label.size() + 2)}});
    }
  };
  add_lines(outcome.watch, "watch");
  add_lines(outcome.suspect, "suspect");
  if (!c.unjudged.empty()) {
    if (kind.empty()) kind = "unjudged";
    reasons.push_back(Json{{"check", "unjudged"}, {"detail", c.unjudged.text}});
  }
  if (kind.empty()) return nullptr;
  return Json{{"case", label},
              {"kind", kind},
              {"baseline_median_us", number_or_null(c.time.baseline_median_us)},
              {"tonight_median_us", number_or_null(c.time.candidate_median_us)},
              {"ratio", number_or_null(c.time.ratio)},
              {"time_verdict", compare::to_string(c.time.verdict)},
              {"reasons", reasons}};
}

}  // namespace

std::string render_nightly_json(const NightlyOutcome& outcome, const NightVerdict& verdict) {
  Json flagged = Json::array();
  Json comparison = nullptr;
  if (outcome.comparison) {
    for (const compare::CaseComparison& c : outcome.comparison->cases) {
      Json item = flagged_case(c, outcome);
      if (!item.is_null()) flagged.push_back(std::move(item));
    }
    comparison = Json::parse(compare::render_json(*outcome.comparison));
  }
  Json json{{"format", kNightlyJsonFormat},
            {"stamp", outcome.stamp},
            {"verdict", verdict.name},
            {"exit_code", verdict.exit_code},
            {"reasons", outcome.trust_reasons},
            {"database", outcome.db_path},
            {"summary", outcome.summary_path},
            {"run_id", outcome.run_id},
            {"status", to_string(outcome.status)},
            {"baseline", outcome.baseline.empty() ? Json(nullptr) : Json(outcome.baseline)},
            {"window_nights", outcome.window_nights},
            {"accepted", outcome.accepted},
            {"timed_on_both", outcome.timed_on_both},
            {"judged_on_time", outcome.judged_on_time},
            {"unjudged", outcome.unjudged},
            {"flagged", flagged},
            {"comparison", comparison}};
  return json.dump(2) + "\n";
}

}  // namespace attnsweep::workflows
