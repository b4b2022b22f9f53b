#include "runner/config/score_mod_reader.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "runner/config/yaml_reader.hpp"

namespace attnsweep {
namespace {

const char* const kSoftcapAllowed = "none (no soft-capping) or a cap above 0, e.g. 30 (Gemma 2's 50, Grok's 30)";

}  // namespace

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

std::vector<ScoreMod> read_score_mods(const std::string& source, const YAML::Node& softcap) {
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

}  // namespace attnsweep
