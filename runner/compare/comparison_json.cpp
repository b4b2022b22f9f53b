#include "runner/compare/comparison_json.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <map>

#include "runner/compare/comparison_headline.hpp"
#include "runner/report/axis_json.hpp"

namespace attnsweep::compare {
namespace {

using Json = nlohmann::ordered_json;

Json optional_number(const std::optional<double>& value) {
  return value && std::isfinite(*value) ? Json(*value) : Json(nullptr);
}

// The label, whether the mask is causal (either alignment), every axis of the case
// (runner/plan/case_axes.hpp: head_dim_v is the values' head dim, head_dim's unless it
// differs; seq_lens_q/kv [] for a uniform batch; softcap null for none), then the device's kind.
Json key_json(const CaseKey& key) {
  Json out{{"label", key.label()}, {"causal", key.mask.is_causal()}};
  report::put_axes(out, key);
  out["device"] = key.device_kind == DeviceKind::cuda ? "cuda" : "cpu";
  return out;
}

Json run_json(const ComparedRun& compared) {
  const storage::RunRow& run = compared.run;
  return Json{{"path", compared.path},          {"run_id", run.run_id},         {"name", run.name},
              {"status", to_string(run.status)}, {"started_at", run.started_at}, {"device", run.device.to_string()},
              {"device_name", run.device_name},  {"git_sha", run.git_sha}};
}

Json time_json(const TimeComparison& time) {
  return Json{{"verdict", to_string(time.verdict)},
              {"baseline_median_us", optional_number(time.baseline_median_us)},
              {"candidate_median_us", optional_number(time.candidate_median_us)},
              {"baseline_samples", time.baseline_samples},
              {"candidate_samples", time.candidate_samples},
              {"ratio", optional_number(time.ratio)},
              {"p_value", optional_number(time.p_value)},
              {"quantile_ratio", optional_number(time.quantile_ratio)},
              {"reason", time.reason},
              {"marked", time.marked()},
              {"cap_mark", time.cap_mark},
              {"baseline_power_cap_share", optional_number(time.baseline_power_cap_share)},
              {"candidate_power_cap_share", optional_number(time.candidate_power_cap_share)},
              {"baseline_thermal_cap_share", optional_number(time.baseline_thermal_cap_share)},
              {"candidate_thermal_cap_share", optional_number(time.candidate_thermal_cap_share)}};
}

Json energy_json(const EnergyComparison& energy) {
  return Json{{"baseline_j", optional_number(energy.baseline_j)},
              {"candidate_j", optional_number(energy.candidate_j)},
              {"baseline_power_w", optional_number(energy.baseline_power_w)},
              {"candidate_power_w", optional_number(energy.candidate_power_w)},
              {"ratio", optional_number(energy.ratio)}};
}

Json side_json(const std::optional<KernelSide>& side) {
  if (!side) return nullptr;
  const auto optional_integer = [](const auto& value) { return value ? Json(*value) : Json(nullptr); };
  return Json{{"launches_per_pass", side->launches_per_pass},
              {"time_us", side->time_us},
              {"time_share", side->time_share},
              {"grid", side->grid.empty() ? Json(nullptr) : Json(side->grid)},
              {"block", side->block.empty() ? Json(nullptr) : Json(side->block)},
              {"registers_per_thread", optional_integer(side->registers_per_thread)},
              {"shared_memory_bytes", optional_integer(side->shared_memory_bytes)},
              {"est_occupancy_pct", optional_number(side->est_occupancy_pct)}};
}

Json kernels_json(const std::optional<KernelDifferences>& differences) {
  if (!differences) return nullptr;
  Json kernels = Json::array();
  for (const KernelDifference& d : differences->kernels) {
    Json aspects = Json::array();
    for (KernelAspect aspect : d.aspects) aspects.push_back(to_string(aspect));
    kernels.push_back(Json{{"name", d.name},
                           {"short_name", d.short_name},
                           {"kind", d.kind},
                           {"change", to_string(d.change)},
                           {"aspects", aspects},
                           {"baseline", side_json(d.baseline)},
                           {"candidate", side_json(d.candidate)}});
  }
  return Json{{"baseline_time_us", differences->baseline_time_us},
              {"candidate_time_us", differences->candidate_time_us},
              {"baseline_rows", differences->baseline_rows},
              {"candidate_rows", differences->candidate_rows},
              {"added", differences->added},
              {"removed", differences->removed},
              {"changed", differences->changed},
              {"unchanged", differences->unchanged},
              {"top_by_time", differences->top_by_time},
              {"missing", differences->missing},
              {"kernels", kernels}};
}

}  // namespace

std::string render_json(const Comparison& comparison) {
  const CompareSettings& settings = comparison.settings;
  Json verdicts = Json::object();
  for (const auto& [verdict, count] : comparison.verdict_counts()) verdicts[to_string(verdict)] = count;
  Json environment = Json::array();
  for (const EnvironmentDifference& d : comparison.environment) {
    environment.push_back(
        Json{{"fact", d.fact}, {"baseline", d.baseline}, {"candidate", d.candidate}, {"breaks_timing", d.breaks_timing}});
  }
  Json cases = Json::array();
  for (const CaseComparison& c : comparison.cases) {
    Json findings = Json::array();
    for (const Finding& f : c.findings) {
      findings.push_back(Json{{"check", to_string(f.check)},
                              {"field", f.field},
                              {"severity", to_string(f.severity)},
                              {"baseline", f.baseline},
                              {"candidate", f.candidate},
                              {"detail", f.detail}});
    }
    cases.push_back(Json{{"key", key_json(c.key)},
                         {"baseline_case_id", c.baseline_case_id},
                         {"candidate_case_id", c.candidate_case_id},
                         {"baseline_status", to_string(c.baseline_status)},
                         {"candidate_status", to_string(c.candidate_status)},
                         {"same", c.same()},
                         {"time", time_json(c.time)},
                         {"energy", energy_json(c.energy)},
                         {"not_judged", c.unjudged.text},
                         {"ignored", c.ignored},  // a nightly rule's reason; "" when none
                         {"findings", findings},
                         {"kernel_differences", kernels_json(c.kernels)}});
  }
  Json only_baseline = Json::array(), only_candidate = Json::array();
  for (const CaseKey& key : comparison.only_in_baseline) only_baseline.push_back(key_json(key));
  for (const CaseKey& key : comparison.only_in_candidate) only_candidate.push_back(key_json(key));
  Json fastest_changes = Json::array();
  for (const ChoiceChange& change : comparison.fastest_changes) {
    fastest_changes.push_back({{"group", change.group},
                               {"baseline_fastest", change.baseline_fastest},
                               {"candidate_fastest", change.candidate_fastest},
                               {"baseline_lead", change.baseline_lead},
                               {"candidate_lead", change.candidate_lead},
                               {"significant", change.significant()}});
  }
  std::map<std::string, std::optional<double>> baseline_ratio;
  for (const ClaimLine& line : comparison.baseline_claims) baseline_ratio[line.claims_file + ":" + line.name] = line.ratio;
  Json claims = Json::array();
  for (const ClaimLine& line : comparison.candidate_claims) {
    const auto before = baseline_ratio.find(line.claims_file + ":" + line.name);
    claims.push_back({{"claim", line.claims_file + ":" + line.name},
                      {"source", line.source_title},
                      {"where", line.source_where},
                      {"claimed_gpu", line.claimed_gpu},
                      {"case", line.case_label},
                      {"claimed_tflops", optional_number(line.claimed_tflops)},
                      {"claimed_time_us", optional_number(line.claimed_time_us)},
                      {"measured_tflops", optional_number(line.measured_tflops)},
                      {"measured_time_us", optional_number(line.measured_time_us)},
                      {"ratio", optional_number(line.ratio)},
                      {"baseline_ratio", before != baseline_ratio.end() ? optional_number(before->second) : Json()},
                      {"verdict", line.verdict},
                      {"validity", line.validity},
                      {"differences", line.differences}});
  }
  const Json document{
      {"format", "attnsweep-compare/1"},
      {"headline", headline(comparison)},
      {"has_regression", comparison.has_regression()},
      {"summary",
       Json{{"regressions", comparison.regressions()},
            {"improvements", comparison.improvements()},
            {"notes", comparison.notes()},
            {"same", comparison.same_cases()},
            {"marked", comparison.marked_cases()},
            {"not_judged", comparison.unjudged_cases()},
            {"inconclusive", comparison.inconclusive()},
            {"kernel_differences", comparison.kernel_difference_cases()},
            {"matched_cases", comparison.cases.size()},
            {"only_in_baseline", comparison.only_in_baseline.size()},
            {"only_in_candidate", comparison.only_in_candidate.size()},
            {"time_verdicts", verdicts}}},
      {"baseline", run_json(comparison.baseline)},
      {"candidate", run_json(comparison.candidate)},
      {"settings",
       Json{{"threshold", settings.threshold},
            {"min_change_us", settings.min_change_us},
            {"shift_quantile", settings.shift_quantile},
            {"alpha", settings.alpha},
            {"min_kept_samples", settings.min_kept_samples},
            {"cap_share_difference", settings.cap_share_difference},
            {"numerics_worse_factor", settings.numerics_worse_factor},
            {"energy_change", settings.energy_change},
            {"tolerances", Json{{"bf16", settings.bf16_tolerance},
                                {"fp16", settings.fp16_tolerance},
                                {"fp32", settings.fp32_tolerance},
                                {"fp8_e4m3", settings.tolerance(Dtype::fp8_e4m3)},
                                {"fp8_e5m2", settings.tolerance(Dtype::fp8_e5m2)}}},
            {"kernels", Json{{"share_change", settings.kernels.share_change},
                             {"top_by_time", settings.kernels.top_by_time},
                             {"short_name_width", settings.kernels.short_name_width}}}}},
      {"warnings", comparison.warnings},
      {"environment", environment},
      {"cases", cases},
      {"only_in_baseline", only_baseline},
      {"only_in_candidate", only_candidate},
      {"fastest_changes", fastest_changes},
      {"claims", claims}};
  // A path or a message need not be UTF-8 (a file name, an environment variable):
  // such bytes become U+FFFD rather than failing the whole document.
  return document.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace attnsweep::compare
