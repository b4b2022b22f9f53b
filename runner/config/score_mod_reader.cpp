#include "runner/config/score_mod_reader.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdlib>

#include "runner/config/yaml_reader.hpp"

namespace attnsweep {
namespace {

const char* const kSoftcapAllowed =
    "none (no soft-capping) or a cap above 0 up to 3.4e+38, e.g. 30 (Gemma 2's 50, Grok's 30)";

// The largest cap fp16 holds. Measured (docs/config.md, "Score modifications"):
// naive's tanh(s / cap) * cap in fp16 stays within fp16's bound up to here
// (rel_error 1.1e-3 against 2e-3 on the CPU), is past it from 3e5 (4e-3), where
// s / cap falls into fp16's subnormals, and is uniform attention from 1e8 (0.7),
// where it is 0. Every other dtype computes any float32 cap within its bound
// (fp8 cases run naive in bf16).
constexpr double kFp16LargestCap = 65504;

}  // namespace

// Every softcap of `softcap` (absent: {none}) as a ScoreMod, each once (by
// value: 30 and 30.0 are one cap); none above what fp16 holds where `dtypes` has fp16.
static std::vector<ScoreMod> read_softcaps(const std::string& source, const YAML::Node& softcap,
                                           const std::vector<Dtype>& dtypes) {
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
    const bool fp16 = std::find(dtypes.begin(), dtypes.end(), Dtype::fp16) != dtypes.end();
    if (fp16 && mod.softcap && *mod.softcap > kFp16LargestCap) {
      reader.fail(listed[i], key,
                  "'" + listed[i].Scalar() +
                      "' is more than fp16 holds (65504), and dtypes has fp16, in which naive computes s / cap (it "
                      "underflows: fp16's rel_error is 4e-3 at 3e5 against its bound 2e-3, 0.7 from 1e8); give fp16 a "
                      "cap up to 65504, or sweep this cap in a config without fp16");
    }
    // A value written twice counts once (docs/config.md), as in every list.
    if (std::find(mods.begin(), mods.end(), mod) == mods.end()) mods.push_back(mod);
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
  // A cap is used as a float32 at least: naive takes it as one (PyTorch's scalar
  // arithmetic of a reduced-precision tensor), an op library's argument is a float.
  // Past FLT_MAX it is inf, and tanh(s / inf) * inf is NaN in every dtype.
  if (cap > FLT_MAX) {
    reader.fail(item, key,
                "'" + raw + "' is more than float32 holds (3.4e+38), in which naive computes tanh(s / cap) * cap and "
                "an op library takes the cap; allowed: " + kSoftcapAllowed);
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
    // A value written twice counts once (docs/config.md), as in every list.
    if (std::find(values.begin(), values.end(), value) == values.end()) values.push_back(value);
  }
  return values;
}

std::vector<std::string> read_score_mod_words(const std::string& source, const std::string& name, const YAML::Node& node,
                                              const std::string& key) {
  std::vector<std::string> words;
  if (name == "softcap") {
    // none, or a cap, or a list of them.
    const std::vector<YAML::Node> listed =
        node.IsSequence() ? std::vector<YAML::Node>(node.begin(), node.end()) : std::vector<YAML::Node>{node};
    if (listed.empty()) YamlReader(source).fail(node, key, "the list is empty; give none or a cap");
    for (const auto& value : listed) {
      const auto cap = read_softcap_item(source, value, key);
      words.push_back(cap ? softcap_text(*cap) : "none");
    }
  } else {
    for (const bool value : read_switches(source, node, key)) words.push_back(value ? "true" : "false");
  }
  return words;
}

std::vector<ScoreMod> read_score_mods(const std::string& source, const YAML::Node& mapping,
                                      const std::vector<Dtype>& dtypes) {
  const std::vector<bool> alibis = read_switches(source, mapping["alibi"], "alibi");
  const std::vector<bool> sink_values = read_switches(source, mapping["sinks"], "sinks");
  std::vector<ScoreMod> mods;
  for (const ScoreMod& capped : read_softcaps(source, mapping["softcap"], dtypes)) {
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
