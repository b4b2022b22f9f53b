#pragma once
// A case's identity, declared once (issue 56): the axes that tell one
// measurement from another, each with its stored columns, where the case's label
// shows it, whether two cases that differ in it may share inputs, and when the
// plan table gives it a column of its own. What was written out by hand in six
// places derives from this list: Case::same_measurement, same_inputs (the shard
// groups and the case runner's inputs reuse), the order of compare's CaseKey, the
// identity block of the stored case columns, compare's JSON key and the plan
// table. tests/test_case_axes.cpp varies each axis and fails when one of them,
// or a printer, leaves it out. A new axis is a member of Case (case.hpp), a line
// here, its columns in schema.sql and storage/case_columns.cpp, and its config key.
// Plain data, no LibTorch, like Case (nvbench's axes_metadata is the model).
#include <cstdint>
#include <functional>
#include <string>
#include <variant>
#include <vector>

#include "runner/plan/case.hpp"

namespace attnsweep {

// An axis's value as printers show it: NULL (an unset soft-cap), a flag, a
// number, a word ("bf16", the mask's label) or a list of lengths.
using AxisValue = std::variant<std::monostate, bool, std::int64_t, double, std::string, std::vector<std::int64_t>>;

// Where a case's label shows an axis: "<variant> <shape> <dtype> <mask...> [pass]".
// The mask part is also the tables' "mask" column (Case::mask_label): the mask,
// the score modifications and determinism ("causal softcap30 deterministic").
enum class LabelPart { variant, shape, dtype, mask, pass };

struct CaseAxis {
  std::string name;                  // compare's JSON key and the plan table's column
  std::vector<std::string> columns;  // its columns in the cases table (schema.sql), in order
  LabelPart part = LabelPart::shape;
  // Cases equal in every axis that shares inputs get the same seeded inputs, so
  // that they are made once (the case runner) and the cases stay on one shard.
  bool shares_inputs = true;
  bool whole_number = false;  // its value is a count (a table aligns it right), from the member's type
  // The value as printers show it (head_dim_v: the values' head dim even where it is head_dim's).
  std::function<AxisValue(const Case&)> value;
  // Three-way comparison in the value's own order (the mask's, not its label's).
  std::function<int(const Case&, const Case&)> order;
  // Set for an axis that the plan table shows only when some case is off its
  // default (paged caches, variable lengths, a value head dim, a pass): forward-only,
  // uniform plans read as they always did. Empty: always shown (or, in the mask part, in the mask column).
  std::function<bool(const Case&)> at_default;
};

// Every axis, in the order of the stored columns; compare's key and JSON follow it.
const std::vector<CaseAxis>& case_axes();
const CaseAxis* find_case_axis(const std::string& name);

// Three-way order of two cases over every axis: 0 for the same measurement.
int measurement_order(const Case& a, const Case& b);
// Equal in every axis that shares inputs (shape, dtype, mask, score modification).
bool same_inputs(const Case& a, const Case& b);
// The same measurement but for the variant (the report's speed-up over naive).
struct SameButVariantLess {
  bool operator()(const Case& a, const Case& b) const;
};
// Three-way order of two shapes over the shape's axes.
int shape_order(const Shape& a, const Shape& b);

// "a,b,c" of a list value, the text of a word, a number as decimal: a cell's text.
std::string axis_text(const AxisValue& value);

}  // namespace attnsweep
