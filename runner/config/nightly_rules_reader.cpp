#include "runner/config/nightly_rules_reader.hpp"

#include <fnmatch.h>

#include <algorithm>

#include "runner/common/identities.hpp"
#include "runner/common/text.hpp"
#include "runner/config/yaml_reader.hpp"

namespace attnsweep {
namespace {

const std::vector<std::string> kNightlyKeys = {"rules"};
const std::vector<std::string> kRuleKeys = {"case", "variant", "shape", "dtype", "mask", "pass", "threshold", "ignore"};

// Where `pattern` opens a bracket expression it never closes (0-based), or npos.
// fnmatch's reading: a '\\' escapes the next character; after '[' (and '!' or
// '^'), a first ']' is a member; "[:", "[." and "[=" open a class that ends at
// ":]", ".]" or "=]".
std::size_t unclosed_bracket(const std::string& pattern) {
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '\\') {
      ++i;
      continue;
    }
    if (pattern[i] != '[') continue;
    std::size_t j = i + 1;
    if (j < pattern.size() && (pattern[j] == '!' || pattern[j] == '^')) ++j;
    if (j < pattern.size() && pattern[j] == ']') ++j;
    while (j < pattern.size() && pattern[j] != ']') {
      if (pattern[j] == '[' && j + 1 < pattern.size() &&
          (pattern[j + 1] == ':' || pattern[j + 1] == '.' || pattern[j + 1] == '=')) {
        const std::size_t end = pattern.find(std::string(1, pattern[j + 1]) + "]", j + 2);
        if (end != std::string::npos) {
          j = end + 2;
          continue;
        }
      }
      ++j;
    }
    if (j >= pattern.size()) return i;
    i = j;
  }
  return std::string::npos;
}

class NightlyRulesReader : public YamlReader {
 public:
  using YamlReader::YamlReader;

  std::vector<CaseRule> read(const YAML::Node& node, const std::vector<std::string>& variant_values) {
    variant_values_ = variant_values;
    if (!node.IsMap()) fail(node, "nightly", "expected a mapping with the key rules, got a " + kind(node));
    check_keys(node, "nightly", kNightlyKeys);
    std::vector<CaseRule> rules;
    if (!node["rules"]) return rules;
    const YAML::Node list = node["rules"];
    if (!list.IsSequence()) fail(list, "nightly.rules", "expected a list of rules, got a " + kind(list));
    for (std::size_t i = 0; i < list.size(); ++i) rules.push_back(rule(list[i], "nightly.rules[" + std::to_string(i) + "]"));
    return rules;
  }

 private:
  CaseRule rule(const YAML::Node& node, const std::string& key) const {
    if (!node.IsMap()) fail(node, key, "expected a mapping: the cases' pattern (case, variant, shape, dtype, mask, pass) and threshold or ignore, got a " + kind(node));
    check_keys(node, key, kRuleKeys);
    CaseRule rule;
    rule.where = source_ + ":" + std::to_string(node.Mark().line + 1) + ":" + std::to_string(node.Mark().column + 1);
    // `names`, `what`: for a field of known values, the pattern must match one of them.
    const auto glob = [&](const char* name, std::string& field, const std::vector<std::string>* names = nullptr,
                          const std::string& what = "") {
      if (!node[name]) return;
      const std::string field_key = key + "." + name;
      field = scalar_string(node[name], field_key);
      if (field.empty()) fail(node[name], field_key, "an empty pattern; leave the key out to match every case");
      if (const std::size_t at = unclosed_bracket(field); at != std::string::npos) {
        fail(node[name], field_key,
             "'" + field + "' has an unclosed '[' at character " + std::to_string(at + 1) +
                 " (fnmatch then reads it as a plain '['); close it, as in 'sdpa_[fc]*', or write '[[]' for a '['");
      }
      if (!names) return;
      const bool matches = std::any_of(names->begin(), names->end(), [&](const std::string& value) {
        return ::fnmatch(field.c_str(), value.c_str(), 0) == 0;
      });
      if (matches) return;
      const std::string suggestion = text::nearest(field, *names);
      fail(node[name], field_key,
           "'" + field + "' matches no " + what + (suggestion.empty() ? "." : "; did you mean '" + suggestion + "'?") +
               " Allowed: a pattern (fnmatch: *, ?, [...]) of " + text::join(*names, ", "));
    };
    static const std::vector<std::string> dtypes = dtype_names(), passes = pass_names();
    glob("case", rule.cases.label);
    glob("variant", rule.cases.variant, &variant_values_, "variant this config can name");
    glob("shape", rule.cases.shape);
    glob("dtype", rule.cases.dtype, &dtypes, "dtype");
    glob("mask", rule.cases.mask);
    glob("pass", rule.cases.pass, &passes, "pass");
    if (node["threshold"]) {
      const double percent = number(node["threshold"], key + ".threshold", 0);
      if (percent >= 100) fail(node["threshold"], key + ".threshold", "a number of percent > 0 and < 100, like --threshold");
      rule.threshold = percent / 100;
    }
    if (node["ignore"]) {
      rule.ignore = scalar_string(node["ignore"], key + ".ignore");
      if (rule.ignore.empty()) fail(node["ignore"], key + ".ignore", "give the reason the cases are not judged, in words");
    }
    if (rule.threshold && !rule.ignore.empty()) {
      fail(node, key, "a rule gives a threshold or ignores its cases, not both");
    }
    if (!rule.threshold && rule.ignore.empty()) {
      fail(node, key, "a rule needs threshold (percent, like --threshold) or ignore (the reason, in words)");
    }
    return rule;
  }

  std::vector<std::string> variant_values_;
};

}  // namespace

std::vector<CaseRule> read_nightly_rules(const std::string& source, const YAML::Node& node,
                                         const std::vector<std::string>& variant_values) {
  return NightlyRulesReader(source).read(node, variant_values);
}

}  // namespace attnsweep
