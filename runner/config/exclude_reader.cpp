#include "runner/config/exclude_reader.hpp"

#include <algorithm>

#include "runner/config/config_keys.hpp"
#include "runner/config/mask_reader.hpp"
#include "runner/config/score_mod_reader.hpp"
#include "runner/config/yaml_reader.hpp"

namespace attnsweep {
namespace {

using namespace config_keys;

// Exclude rules at most: every case is checked against every rule (100,000
// cases x 1,000 rules take about 2 s of `plan`); a rule takes lists of values.
constexpr std::size_t kMaxExcludeRules = 1000;

class ExcludeReader : public YamlReader {
 public:
  using YamlReader::YamlReader;

  std::vector<ExcludeRule> excludes(const YAML::Node& node, const std::vector<std::string>& variant_values) const {
    if (!node.IsSequence()) fail(node, "exclude", "expected a list of mappings, e.g. [{variant: sdpa_math, seq_len: 8192}]");
    if (node.size() > kMaxExcludeRules) {
      fail(node, "exclude", "lists " + std::to_string(node.size()) + " rules; at most " + std::to_string(kMaxExcludeRules) +
                                " are allowed (every case is checked against each): give a rule lists of values "
                                "instead, e.g. {variant: sdpa_math, seq_len: [4096, 8192]}");
    }
    const WindowReader windows(source_);
    std::vector<ExcludeRule> rules;
    int index = 0;
    for (const auto& item : node) {
      const std::string key = "exclude[" + std::to_string(index++) + "]";
      if (!item.IsMap() || item.size() == 0) fail(item, key, "expected a non-empty mapping of keys to values");
      check_keys(item, key, kExcludeKeys);
      ExcludeRule rule;
      rule.where = location(item.Mark());
      for (const auto& entry : item) {
        const std::string field = entry.first.Scalar();
        const std::string field_key = key + "." + field;
        std::vector<std::string> values;
        if (field == "variant") {
          values = names(entry.second, field_key, variant_values);
        } else if (field == "dtype") {
          values = names(entry.second, field_key, dtype_names());
        } else if (field == "window") {
          // none, or {left: N, right: M} (a side left out matches any bound), or a list of them.
          for (const auto& item : windows.window_items(entry.second, field_key)) {
            const auto bounds =
                windows.window_item(item, field_key, "expected none or a mapping {left: N, right: M} (a side left out matches any bound)");
            const auto side = [](const std::optional<std::int64_t>& bound) {
              return bound ? std::to_string(*bound) : std::string("*");
            };
            values.push_back(bounds ? side(bounds->left) + "," + side(bounds->right) : "none");
          }
        } else if (field == "causal") {
          // true matches either alignment; top_left and bottom_right one of them.
          for (const auto& item : items(entry.second, field_key)) {
            const std::string& raw = item.Scalar();
            if (raw == "true" || raw == "True") values.push_back("true");
            else if (raw == "false" || raw == "False") values.push_back("false");
            else if (raw == "top_left" || raw == "bottom_right") values.push_back(raw);
            else fail(item, field_key, "unknown value '" + raw + "'; allowed: " + kCausalValues);
          }
        } else if (std::find(kScoreModKeys.begin(), kScoreModKeys.end(), field) != kScoreModKeys.end()) {
          values = read_score_mod_words(source_, field, entry.second, field_key);
        } else if (field == "deterministic") {
          for (const bool value : read_switches(source_, entry.second, field_key)) values.push_back(value ? "true" : "false");
        } else if (field == "pass") {
          values = names(entry.second, field_key, pass_names());
        } else {
          for (auto value : sizes(entry.second, field_key, smallest_size(field))) values.push_back(std::to_string(value));
        }
        rule.match[field] = values;
      }
      rules.push_back(rule);
    }
    return rules;
  }
};

}  // namespace

std::vector<ExcludeRule> read_excludes(const std::string& source, const YAML::Node& node,
                                       const std::vector<std::string>& variant_values) {
  return ExcludeReader(source).excludes(node, variant_values);
}

}  // namespace attnsweep
