#include "runner/plan/case_axes.hpp"

#include <type_traits>
#include <utility>

namespace attnsweep {
namespace {

template <typename T>
int three_way(const T& a, const T& b) {
  return a < b ? -1 : (b < a ? 1 : 0);
}

AxisValue shown(std::int64_t value) { return value; }
AxisValue shown(bool value) { return value; }
AxisValue shown(const std::string& text) { return text; }
AxisValue shown(Dtype dtype) { return to_string(dtype); }
AxisValue shown(Pass pass) { return to_string(pass); }
AxisValue shown(const Mask& mask) { return mask.label(); }
AxisValue shown(const std::vector<std::int64_t>& lengths) { return lengths; }
AxisValue shown(const std::optional<double>& value) { return value ? AxisValue{*value} : AxisValue{}; }

// One axis over `get`, a case's member (or what a member means, as value_dim()).
template <typename Get>
CaseAxis axis(std::string name, std::vector<std::string> columns, LabelPart part, bool shares_inputs, Get get,
              std::function<bool(const Case&)> at_default = {}) {
  CaseAxis a;
  a.name = std::move(name);
  a.columns = std::move(columns);
  a.part = part;
  a.shares_inputs = shares_inputs;
  a.whole_number = std::is_same_v<std::decay_t<decltype(get(std::declval<const Case&>()))>, std::int64_t>;
  a.value = [get](const Case& c) { return shown(get(c)); };
  a.order = [get](const Case& x, const Case& y) { return three_way(get(x), get(y)); };
  a.at_default = std::move(at_default);
  return a;
}

// A shape member: stored in a column of its name, shared inputs, in the label's shape.
CaseAxis shape_axis(const std::string& name, std::int64_t Shape::*member, std::function<bool(const Case&)> at_default = {}) {
  return axis(name, {name}, LabelPart::shape, true, [member](const Case& c) { return c.shape.*member; },
              std::move(at_default));
}
CaseAxis lengths_axis(const std::string& name, std::vector<std::int64_t> Shape::*member) {
  return axis(name, {name}, LabelPart::shape, true, [member](const Case& c) -> const auto& { return c.shape.*member; },
              [](const Case& c) { return !c.shape.variable_length(); });
}

}  // namespace

const std::vector<CaseAxis>& case_axes() {
  static const std::vector<CaseAxis> axes = {
      axis("variant", {"variant"}, LabelPart::variant, false, [](const Case& c) -> const auto& { return c.variant; }),
      shape_axis("batch", &Shape::batch),
      shape_axis("heads", &Shape::heads),
      shape_axis("kv_heads", &Shape::kv_heads),
      shape_axis("seq_len_q", &Shape::seq_len_q),
      shape_axis("seq_len_kv", &Shape::seq_len_kv),
      shape_axis("head_dim", &Shape::head_dim),
      axis("dtype", {"dtype"}, LabelPart::dtype, true, [](const Case& c) { return c.dtype; }),
      axis("mask", {"causal", "causal_bottom_right", "window_left", "window_right"}, LabelPart::mask, true,
           [](const Case& c) -> const auto& { return c.mask; }),
      lengths_axis("seq_lens_q", &Shape::seq_lens_q),
      lengths_axis("seq_lens_kv", &Shape::seq_lens_kv),
      shape_axis("page_size", &Shape::page_size, [](const Case& c) { return c.shape.page_size == 0; }),
      // Stored as 0 where it is head_dim's; shown and compared as the values' head dim.
      axis("head_dim_v", {"head_dim_v"}, LabelPart::shape, true, [](const Case& c) { return c.shape.value_dim(); },
           [](const Case& c) { return c.shape.value_dim() == c.shape.head_dim; }),
      axis("softcap", {"softcap"}, LabelPart::mask, true, [](const Case& c) -> const auto& { return c.scores.softcap; }),
      axis("alibi", {"alibi"}, LabelPart::mask, true, [](const Case& c) { return c.scores.alibi; }),
      axis("sinks", {"sinks"}, LabelPart::mask, true, [](const Case& c) { return c.scores.sinks; }),
      // The same inputs timed with PyTorch's deterministic algorithms on or off.
      axis("deterministic", {"deterministic"}, LabelPart::mask, false, [](const Case& c) { return c.deterministic; }),
      axis("pass", {"pass"}, LabelPart::pass, false, [](const Case& c) { return c.pass; },
           [](const Case& c) { return c.pass == Pass::forward; }),
  };
  return axes;
}

const CaseAxis* find_case_axis(const std::string& name) {
  for (const CaseAxis& a : case_axes()) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

int measurement_order(const Case& a, const Case& b) {
  for (const CaseAxis& axis : case_axes()) {
    if (const int order = axis.order(a, b)) return order;
  }
  return 0;
}

bool same_inputs(const Case& a, const Case& b) {
  for (const CaseAxis& axis : case_axes()) {
    if (axis.shares_inputs && axis.order(a, b) != 0) return false;
  }
  return true;
}

bool SameButVariantLess::operator()(const Case& a, const Case& b) const {
  for (const CaseAxis& axis : case_axes()) {
    if (axis.part == LabelPart::variant) continue;
    if (const int order = axis.order(a, b)) return order < 0;
  }
  return false;
}

int shape_order(const Shape& a, const Shape& b) {
  Case x, y;
  x.shape = a;
  y.shape = b;
  for (const CaseAxis& axis : case_axes()) {
    if (axis.part != LabelPart::shape) continue;
    if (const int order = axis.order(x, y)) return order;
  }
  return 0;
}

std::string axis_text(const AxisValue& value) {
  struct Text {
    std::string operator()(std::monostate) const { return ""; }
    std::string operator()(bool flag) const { return flag ? "true" : "false"; }
    std::string operator()(std::int64_t number) const { return std::to_string(number); }
    std::string operator()(double number) const { return softcap_text(number); }
    std::string operator()(const std::string& text) const { return text; }
    std::string operator()(const std::vector<std::int64_t>& lengths) const { return lengths_text(lengths); }
  };
  return std::visit(Text{}, value);
}

// Case's and Shape's relations, from the axes.
bool Case::same_measurement(const Case& other) const { return measurement_order(*this, other) == 0; }
bool Shape::operator==(const Shape& other) const { return shape_order(*this, other) == 0; }

}  // namespace attnsweep
