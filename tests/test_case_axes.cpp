// Issue 56: a case's identity is declared once (runner/plan/case_axes.hpp).
// Each axis is varied on its own, and everything that tells cases apart or
// prints them must see the difference: the label, same_measurement and compare's
// key, same_inputs (as the axis says), the store and its reader, compare's JSON,
// the plan table and the report (HTML and markdown). A new axis without a way to
// vary it here fails the first test, so the next axis cannot skip a printer.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "runner/compare/case_key.hpp"
#include "runner/compare/comparison_json.hpp"
#include "runner/plan/case_axes.hpp"
#include "runner/report/axis_json.hpp"
#include "runner/report/plan_table.hpp"
#include "runner/report/writers.hpp"
#include "runner/run_report/html_report.hpp"
#include "runner/run_report/markdown_report.hpp"
#include "runner/storage/run_reader.hpp"
#include "runner/storage/store.hpp"
#include "tests/support/run_record.hpp"
#include "tests/support/scratch_directory.hpp"

namespace attnsweep {
namespace {

struct Variation {
  Case before, after;  // the same case but for one axis
};

Case base_case() {
  Case c;
  c.variant = "naive";
  c.shape = Shape{2, 8, 4, 64, 64, 64};
  c.dtype = Dtype::bf16;
  c.mask = Mask(true);
  return c;
}

// A variable-length batch of two sequences, the longest 64 queries and 64 keys.
Case variable_length_case() {
  Case c = base_case();
  c.shape.seq_lens_q = {64, 32};
  c.shape.seq_lens_kv = {64, 64};
  return c;
}

Variation varied(const std::function<void(Case&)>& change, Case before = base_case()) {
  Case after = before;
  change(after);
  return {before, after};
}

// How to vary each axis alone (keeping the case one the store accepts).
const std::map<std::string, std::function<Variation()>>& variations() {
  static const std::map<std::string, std::function<Variation()>> all = {
      {"variant", [] { return varied([](Case& c) { c.variant = "sdpa_math"; }); }},
      {"batch", [] { return varied([](Case& c) { c.shape.batch = 3; }); }},
      {"heads", [] { return varied([](Case& c) { c.shape.heads = 16; }); }},
      {"kv_heads", [] { return varied([](Case& c) { c.shape.kv_heads = 2; }); }},
      {"seq_len_q", [] { return varied([](Case& c) { c.shape.seq_len_q = 32; }); }},
      {"seq_len_kv", [] { return varied([](Case& c) { c.shape.seq_len_kv = 96; }); }},
      // With the values' head dim written out, so that it stays 64.
      {"head_dim", [] {
         Case before = base_case();
         before.shape.head_dim_v = 64;
         return varied([](Case& c) { c.shape.head_dim = 128; }, before);
       }},
      {"dtype", [] { return varied([](Case& c) { c.dtype = Dtype::fp16; }); }},
      {"mask", [] { return varied([](Case& c) { c.mask = Mask(CausalAlignment::bottom_right, 16, 0); }); }},
      {"seq_lens_q", [] { return varied([](Case& c) { c.shape.seq_lens_q = {32, 64}; }, variable_length_case()); }},
      {"seq_lens_kv", [] { return varied([](Case& c) { c.shape.seq_lens_kv = {48, 64}; }, variable_length_case()); }},
      {"page_size", [] { return varied([](Case& c) { c.shape.page_size = 16; }); }},
      {"head_dim_v", [] { return varied([](Case& c) { c.shape.head_dim_v = 32; }); }},
      {"softcap", [] { return varied([](Case& c) { c.scores.softcap = 30.0; }); }},
      {"alibi", [] { return varied([](Case& c) { c.scores.alibi = true; }); }},
      {"sinks", [] { return varied([](Case& c) { c.scores.sinks = true; }); }},
      {"deterministic", [] { return varied([](Case& c) { c.deterministic = true; }); }},
      {"pass", [] { return varied([](Case& c) { c.pass = Pass::backward; }); }},
  };
  return all;
}

// Every axis, with its variation; fails for an axis this file does not know yet.
std::vector<std::pair<const CaseAxis*, Variation>> every_axis_varied() {
  std::vector<std::pair<const CaseAxis*, Variation>> out;
  for (const CaseAxis& axis : case_axes()) {
    const auto found = variations().find(axis.name);
    if (found == variations().end()) {
      ADD_FAILURE() << "the axis '" << axis.name << "' has no variation in tests/test_case_axes.cpp: add one";
      continue;
    }
    Variation v = found->second();
    v.after.plan_index = 1;
    out.emplace_back(&axis, v);
  }
  return out;
}

TEST(CaseAxes, EveryAxisIsVariedHereAndChangesOnlyItsOwnValue) {
  EXPECT_EQ(case_axes().size(), variations().size()) << "a variation here names no axis of case_axes.cpp";
  for (const auto& [axis, v] : every_axis_varied()) {
    for (const CaseAxis& other : case_axes()) {
      EXPECT_EQ(other.order(v.before, v.after) != 0, &other == axis) << axis->name << " varied; " << other.name;
    }
  }
}

TEST(CaseAxes, TheStoredColumnsAreTheAxesColumnsAndEachIsNamedOnce) {
  std::set<std::string> names, columns;
  for (const CaseAxis& axis : case_axes()) {
    EXPECT_TRUE(names.insert(axis.name).second) << axis.name;
    EXPECT_FALSE(axis.columns.empty()) << axis.name;
    for (const std::string& column : axis.columns) EXPECT_TRUE(columns.insert(column).second) << column;
    EXPECT_EQ(find_case_axis(axis.name), &axis);
  }
  EXPECT_EQ(find_case_axis("plan_index"), nullptr);  // where a case stands in the plan is no axis
}

TEST(CaseAxes, EveryAxisTellsTheLabelTheMeasurementAndCompareKeyApart) {
  for (const auto& [axis, v] : every_axis_varied()) {
    SCOPED_TRACE(axis->name);
    EXPECT_NE(v.before.label(), v.after.label());
    EXPECT_FALSE(v.before.same_measurement(v.after));
    EXPECT_TRUE(v.before.same_measurement(v.before));
    EXPECT_EQ(measurement_order(v.before, v.after), -measurement_order(v.after, v.before));
    const compare::CaseKey before(v.before, DeviceKind::cuda), after(v.after, DeviceKind::cuda);
    EXPECT_FALSE(before == after);
    EXPECT_NE(before < after, after < before);
    EXPECT_EQ(before, compare::CaseKey(v.before, DeviceKind::cuda));
    // Only the axes that share inputs keep two cases from sharing them.
    EXPECT_EQ(same_inputs(v.before, v.after), !axis->shares_inputs);
    // The report's "same measurement but the variant" (speed-up over naive).
    const bool same_but_variant =
        !SameButVariantLess{}(v.before, v.after) && !SameButVariantLess{}(v.after, v.before);
    EXPECT_EQ(same_but_variant, axis->part == LabelPart::variant);
  }
  // The variant, determinism and the pass time the same inputs; the rest draw their own.
  std::vector<std::string> not_sharing;
  for (const CaseAxis& axis : case_axes()) {
    if (!axis.shares_inputs) not_sharing.push_back(axis.name);
  }
  EXPECT_EQ(not_sharing, (std::vector<std::string>{"variant", "deterministic", "pass"}));
}

TEST(CaseAxes, EveryAxisIsStoredAndReadBack) {
  testing::ScratchDirectory scratch("attnsweep-case-axes");
  const std::string path = scratch.path("axes.db");
  storage::Store store(path);
  storage::RunRecord record = testing::unit_run_record("axes");
  const auto varied_axes = every_axis_varied();
  record.planned_cases = static_cast<int>(2 * varied_axes.size());
  const auto run_id = store.begin_run(record);
  CaseResult result;
  result.device = Device::cpu();
  int index = 0;
  for (const auto& [axis, v] : varied_axes) {
    Case before = v.before, after = v.after;
    before.plan_index = index++;
    after.plan_index = index++;
    store.add_case(run_id, before, result);
    store.add_case(run_id, after, result);
  }
  store.finish_run(run_id, RunStatus::done);
  const auto rows = storage::RunReader(path).cases(run_id);
  ASSERT_EQ(rows.size(), 2 * varied_axes.size());
  for (std::size_t i = 0; i < varied_axes.size(); ++i) {
    const auto& [axis, v] = varied_axes[i];
    SCOPED_TRACE(axis->name);
    EXPECT_TRUE(rows[2 * i].identity.same_measurement(v.before)) << rows[2 * i].identity.label();
    EXPECT_TRUE(rows[2 * i + 1].identity.same_measurement(v.after)) << rows[2 * i + 1].identity.label();
  }
}

std::string json_of(const Case& c) {
  compare::Comparison comparison;
  comparison.only_in_baseline.push_back(compare::CaseKey(c, DeviceKind::cuda));
  return compare::render_json(comparison);
}

std::string plan_text(const Case& c) {
  Plan plan;
  plan.cases.push_back(c);
  std::ostringstream out;
  report::write_table(out, report::plan_table(plan, Device::cpu()), report::Format::csv);
  return out.str();
}

run_report::RunReport report_of(const Case& c) {
  run_report::RunReport report;
  report.run.run_id = 1;
  report.run.device = Device::cpu();
  run_report::ReportCase one;
  one.row.identity = c;
  one.row.device = Device::cpu();
  one.row.status = CaseStatus::ok;
  report.cases.push_back(one);
  return report;
}

std::string html_of(const Case& c) {
  std::ostringstream out;
  run_report::write_html_report(out, report_of(c));
  return out.str();
}

// The case the HTML report embedded for its script (report.js reads it).
nlohmann::json embedded_case(const std::string& html) {
  const std::string open = "<script type=\"application/json\" id=\"report-data\">";
  const auto start = html.find(open);
  if (start == std::string::npos) return nullptr;
  const auto end = html.find("</script>", start);
  return nlohmann::json::parse(html.substr(start + open.size(), end - start - open.size()))["cases"][0];
}

std::string markdown_of(const Case& c) {
  std::ostringstream out;
  run_report::write_markdown_report(out, report_of(c));
  return out.str();
}

TEST(CaseAxes, EveryPrinterShowsEveryAxis) {
  for (const auto& [axis, v] : every_axis_varied()) {
    SCOPED_TRACE(axis->name);
    const std::string json = json_of(v.after);
    EXPECT_NE(json_of(v.before), json);
    EXPECT_NE(json.find("\"" + axis->name + "\":"), std::string::npos) << json;
    Case before = v.before, after = v.after;
    after.plan_index = before.plan_index;  // the row's number is no axis
    EXPECT_NE(plan_text(before), plan_text(after));
    const std::string html = html_of(after);
    EXPECT_NE(html_of(before), html);
    // Under the axis's name, its value: the report prints the axes, not a copy of them.
    EXPECT_EQ(embedded_case(html)[axis->name], report::axis_json<nlohmann::json>(axis->value(after))) << html;
    EXPECT_NE(markdown_of(before), markdown_of(after));
  }
}

// The plan table aligns an axis by whole_number: the counts of a shape, nothing else.
TEST(CaseAxes, TheCountsOfAShapeAreWholeNumbers) {
  std::set<std::string> counts;
  for (const CaseAxis& axis : case_axes()) {
    if (axis.whole_number) counts.insert(axis.name);
    EXPECT_EQ(axis.whole_number, std::holds_alternative<std::int64_t>(axis.value(base_case()))) << axis.name;
  }
  EXPECT_EQ(counts, (std::set<std::string>{"batch", "heads", "kv_heads", "seq_len_q", "seq_len_kv", "head_dim",
                                           "page_size", "head_dim_v"}));
}

}  // namespace
}  // namespace attnsweep
