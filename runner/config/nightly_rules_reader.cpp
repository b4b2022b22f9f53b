#include "runner/config/nightly_rules_reader.hpp"

#include "runner/config/yaml_reader.hpp"

namespace attnsweep {
namespace {

const std::vector<std::string> kNightlyKeys = {"rules"};
const std::vector<std::string> kRuleKeys = {"case", "variant", "shape", "dtype", "mask", "pass", "threshold", "ignore"};

class NightlyRulesReader : public YamlReader {
 public:
  using YamlReader::YamlReader;

  std::vector<CaseRule> read(const YAML::Node& node) const {
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
    const auto glob = [&](const char* name, std::string& field) {
      if (node[name]) {
        field = scalar_string(node[name], key + "." + name);
        if (field.empty()) fail(node[name], key + "." + name, "an empty pattern; leave the key out to match every case");
      }
    };
    glob("case", rule.cases.label);
    glob("variant", rule.cases.variant);
    glob("shape", rule.cases.shape);
    glob("dtype", rule.cases.dtype);
    glob("mask", rule.cases.mask);
    glob("pass", rule.cases.pass);
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
};

}  // namespace

std::vector<CaseRule> read_nightly_rules(const std::string& source, const YAML::Node& node) {
  return NightlyRulesReader(source).read(node);
}

}  // namespace attnsweep
