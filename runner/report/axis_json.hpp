#pragma once
// A case's axes (runner/plan/case_axes.hpp) as JSON, each under its name and in
// the axes' order: the identity part of compare's JSON key. A list is an array,
// an unset value (no soft-cap) null. Header-only over nlohmann's json and ordered_json.
#include <nlohmann/json.hpp>

#include <variant>

#include "runner/plan/case_axes.hpp"

namespace attnsweep::report {

template <typename Json>
Json axis_json(const AxisValue& value) {
  return std::visit(
      [](const auto& v) -> Json {
        if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::monostate>) {
          return Json(nullptr);
        } else {
          return Json(v);
        }
      },
      value);
}

// Appends {"<axis>": value} for every axis of `c`.
template <typename Json>
void put_axes(Json& out, const Case& c) {
  for (const CaseAxis& axis : case_axes()) out[axis.name] = axis_json<Json>(axis.value(c));
}

}  // namespace attnsweep::report
