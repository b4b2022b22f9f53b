#include "runner/config/yaml_reader.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include "runner/common/text.hpp"
#include "runner/config/config_keys.hpp"
#include "runner/config/measure_settings.hpp"

namespace attnsweep {

using namespace config_keys;

SourceLocation location(const YAML::Mark& mark) {
  if (mark.line < 0) return {};
  return {mark.line + 1, mark.column + 1};
}

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

void YamlReader::fail(const YAML::Node& node, const std::string& key, const std::string& message) const {
  throw ConfigError(source_, node ? location(node.Mark()) : SourceLocation{}, key, message);
}

void YamlReader::require(const YAML::Node& map, const std::string& key, const std::string& allowed) const {
  if (!map[key]) fail(map, key, "missing; expected " + allowed);
}

void YamlReader::check_keys(const YAML::Node& map, const std::string& prefix, const std::vector<std::string>& allowed) const {
  std::set<std::string> seen;
  for (const auto& entry : map) {
    const std::string key = entry.first.Scalar();
    const std::string full = prefix.empty() ? key : prefix + "." + key;
    if (!seen.insert(key).second) fail(entry.first, full, "duplicate key");
    if (!contains(allowed, key)) {
      const std::string home = belongs_elsewhere(key, prefix);
      const std::string suggestion = text::nearest(key, allowed);
      std::string message = "unknown key";
      message += !home.empty()          ? "; " + home + "."
                 : suggestion.empty() ? "."
                                      : "; did you mean '" + suggestion + "'?";
      fail(entry.first, full, message + " Allowed: " + text::join(allowed, ", "));
    }
  }
}

// Where a key that is unknown under `prefix` belongs instead ("" when nowhere):
// a shape axis or a measure setting written at the top level, or a top-level
// key indented under another one.
std::string YamlReader::belongs_elsewhere(const std::string& key, const std::string& prefix) {
  if (prefix.empty() && contains(kShapeKeys, key)) {
    return "'" + key + "' is a shape axis and belongs under 'shapes:', e.g. shapes: {batch: [1, 8], heads: 16, "
           "seq_len: 1024, head_dim: 64}";
  }
  if (prefix.empty() && contains(MeasureSettings::keys(), key)) {
    return "'" + key + "' is a measure setting and belongs under 'measure:', e.g. measure: {" + key + ": ...}";
  }
  if (!prefix.empty() && contains(kTopLevelKeys, key)) {
    return "'" + key + "' belongs at the top level, not under '" + prefix + "' (check the indentation)";
  }
  return "";
}

std::string YamlReader::scalar_string(const YAML::Node& node, const std::string& key) const {
  if (!node.IsScalar()) fail(node, key, "expected a string");
  // A "\0" escape would cut the name short in SQLite and in C strings.
  if (node.Scalar().find('\0') != std::string::npos) fail(node, key, "contains a NUL character (\\0); remove it");
  return node.Scalar();
}

std::int64_t YamlReader::integer(const YAML::Node& node, const std::string& key, std::int64_t minimum,
                     std::int64_t maximum) const {
  if (!node.IsScalar()) fail(node, key, "expected an integer, got a " + kind(node));
  const std::string& raw = node.Scalar();
  const std::string range = "must be between " + std::to_string(minimum) + " and " + std::to_string(maximum);
  std::size_t used = 0;
  long long value = 0;
  try {
    value = std::stoll(raw, &used, 10);
  } catch (const std::out_of_range&) {
    fail(node, key, "out of range: " + range + ", got " + raw);  // past the 64-bit range
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != raw.size()) fail(node, key, "expected an integer, got '" + raw + "'");
  if (value < minimum || value > maximum) fail(node, key, range + ", got " + raw);
  return value;
}

double YamlReader::number(const YAML::Node& node, const std::string& key, double minimum, bool inclusive) const {
  if (!node.IsScalar()) fail(node, key, "expected a number, got a " + kind(node));
  const std::string& raw = node.Scalar();
  const std::string range = std::string(inclusive ? "must be at least " : "must be greater than ") + text::fixed(minimum, 0);
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(raw, &used);
  } catch (const std::out_of_range&) {
    fail(node, key, "out of range: a number's size must lie between about 1e-308 and 1e308, got " + raw + "; " + range);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != raw.size() || !(value == value)) fail(node, key, "expected a number, got '" + raw + "'");
  if (!std::isfinite(value)) fail(node, key, "expected a finite number, got '" + raw + "'; " + range);
  if (inclusive ? !(value >= minimum) : !(value > minimum)) fail(node, key, range + ", got " + raw);
  return value;
}

bool YamlReader::boolean(const YAML::Node& node, const std::string& key) const {
  if (node.IsScalar()) {
    const std::string& raw = node.Scalar();
    if (raw == "true" || raw == "True") return true;
    if (raw == "false" || raw == "False") return false;
    fail(node, key, "expected true or false, got '" + raw + "'");
  }
  fail(node, key, "expected true or false, got a " + kind(node));
}

std::string YamlReader::kind(const YAML::Node& node) {
  if (node.IsMap()) return "mapping";
  if (node.IsSequence()) return "list";
  if (node.IsNull()) return "null";
  return "scalar";
}

std::vector<YAML::Node> YamlReader::items(const YAML::Node& node, const std::string& key) const {
  std::vector<YAML::Node> out;
  if (node.IsScalar()) {
    out.push_back(node);
  } else if (node.IsSequence()) {
    for (const auto& item : node) {
      if (!item.IsScalar()) fail(item, key, "expected a scalar list item, got a " + kind(item));
      out.push_back(item);
    }
    if (out.empty()) fail(node, key, "the list is empty; give at least one value");
  } else {
    fail(node, key, "expected a value or a list of values, got a " + kind(node));
  }
  return out;
}

std::vector<std::string> YamlReader::names(const YAML::Node& node, const std::string& key,
                               const std::vector<std::string>& allowed) const {
  std::vector<std::string> out;
  std::set<std::string> seen;  // a set: a list of thousands is read in a moment
  for (const auto& item : items(node, key)) {
    const std::string value = item.Scalar();
    if (std::find(allowed.begin(), allowed.end(), value) == allowed.end()) {
      const std::string suggestion = text::nearest(value, allowed);
      std::string message = "unknown value '" + value + "'";
      message += suggestion.empty() ? "." : "; did you mean '" + suggestion + "'?";
      fail(item, key, message + " Allowed: " + text::join(allowed, ", "));
    }
    if (seen.insert(value).second) out.push_back(value);
  }
  return out;
}

std::vector<std::int64_t> YamlReader::sizes(const YAML::Node& node, const std::string& key, std::int64_t minimum) const {
  std::vector<std::int64_t> out;
  std::set<std::int64_t> seen;
  for (const auto& item : items(node, key)) {
    const std::int64_t value = integer(item, key, minimum, kMaxDimension);
    if (seen.insert(value).second) out.push_back(value);
  }
  return out;
}

}  // namespace attnsweep
