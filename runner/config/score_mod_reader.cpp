#include "runner/config/score_mod_reader.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "runner/config/yaml_reader.hpp"

namespace attnsweep {
namespace {

const char* const kSoftcapAllowed = "none (no soft-capping) or a cap above 0, e.g. 30 (Gemma 2's 50, Grok's 30)";

}  // namespace

// Every softcap of `softcap` (absent: {none}) as a ScoreMod, each once.
static std::vector<ScoreMod> read_softcaps(const std::string& source, const YAML::Node& softcap) {
  if (!softcap) return {ScoreMod{}};
  const YamlReader reader(source);
  std::vector<ScoreMod> mods;
  if (softcap.IsSequence() && softcap.size() == 0) reader.fail(softcap, "softcap", "the list is empty; give none or a cap");
  const std::vector<YAML::Node> listed = softcap.IsSequence() ? std::vector<YAML::Node>(softcap.begin(), softcap.end())
                                                              : std::vector<YAML::Node>{softcap};
  for (std::size_t i = 0; i < listed.size(); ++i) {
    const std::string key = softcap.IsSequence() ? "softcap[" + std::to_string(i) + "]" : "softcap";
    ScoreMod mod;
    mod.softcap = read_softcap_item(source, listed[i], key);
    if (std::find(mods.begin(), mods.end(), mod) != mods.end()) {
      reader.fail(listed[i], key, "'" + (mod.any() ? softcap_text(*mod.softcap) : "none") + "' is listed twice; give each softcap once");
    }
    mods.push_back(mod);
  }
  return mods;
}

std::optional<double> read_softcap_item(const std::string& source, const YAML::Node& item, const std::string& key) {
  const YamlReader reader(source);
  if (item.IsNull()) return std::nullopt;  // `softcap: ~`
  if (!item.IsScalar()) reader.fail(item, key, "expected " + std::string(kSoftcapAllowed) + ", got " + YamlReader::kind(item));
  const std::string& raw = item.Scalar();
  if (raw == "none" || raw == "None" || raw == "null") return std::nullopt;
  char* end = nullptr;
  const double cap = std::strtod(raw.c_str(), &end);
  if (raw.empty() || *end != '\0' || !std::isfinite(cap) || !(cap > 0)) {
    reader.fail(item, key, "'" + raw + "' is not a cap; allowed: " + kSoftcapAllowed);
  }
  return cap;
}

std::vector<bool> read_switches(const std::string& source, const YAML::Node& node, const std::string& key) {
  if (!node) return {false};
  const YamlReader reader(source);
  if (node.IsSequence() && node.size() == 0) reader.fail(node, key, "the list is empty; give true, false or both");
  if (!node.IsScalar() && !node.IsSequence()) {
    reader.fail(node, key, "expected true, false or a list of them, got a " + YamlReader::kind(node));
  }
  std::vector<bool> values;
  const std::vector<YAML::Node> listed = node.IsSequence() ? std::vector<YAML::Node>(node.begin(), node.end())
                                                           : std::vector<YAML::Node>{node};
  for (std::size_t i = 0; i < listed.size(); ++i) {
    const std::string item_key = node.IsSequence() ? key + "[" + std::to_string(i) + "]" : key;
    const bool value = reader.boolean(listed[i], item_key);
    if (std::find(values.begin(), values.end(), value) != values.end()) {
      reader.fail(listed[i], item_key, std::string("'") + (value ? "true" : "false") + "' is listed twice; give each value once");
    }
    values.push_back(value);
  }
  return values;
}

std::vector<ScoreMod> read_score_mods(const std::string& source, const YAML::Node& softcap, const YAML::Node& alibi,
                                      const YAML::Node& sinks) {
  const std::vector<bool> alibis = read_switches(source, alibi, "alibi");
  const std::vector<bool> sink_values = read_switches(source, sinks, "sinks");
  std::vector<ScoreMod> mods;
  for (const ScoreMod& capped : read_softcaps(source, softcap)) {
    for (const bool with_alibi : alibis) {
      for (const bool with_sinks : sink_values) {
        ScoreMod mod = capped;
        mod.alibi = with_alibi;
        mod.sinks = with_sinks;
        mods.push_back(mod);
      }
    }
  }
  return mods;
}

}  // namespace attnsweep
