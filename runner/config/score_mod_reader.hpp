#pragma once
// The score modifications a config sweeps (docs/config.md, "Score
// modifications"): `softcap` (none, a cap above 0, or a list of them), `alibi`
// and `sinks` (true, false or a list of both), each value once in the order
// written; absent: off. The plan sweeps their cross product.
#include <yaml-cpp/yaml.h>

#include <optional>
#include <string>
#include <vector>

#include "runner/common/score_mod.hpp"

namespace attnsweep {

// One softcap value as written at `key`: nullopt for none, else the cap (> 0, finite).
std::optional<double> read_softcap_item(const std::string& source, const YAML::Node& item, const std::string& key);

// An on/off axis (`alibi`, `sinks`) as written at `key`: true, false, or a list
// of them, each once, in the order written; absent: {false}.
std::vector<bool> read_switches(const std::string& source, const YAML::Node& node, const std::string& key);

// The cross product of `softcap` x `alibi` x `sinks` (the top-level keys; each
// absent: off) as ScoreMods, softcap outermost.
std::vector<ScoreMod> read_score_mods(const std::string& source, const YAML::Node& softcap, const YAML::Node& alibi,
                                      const YAML::Node& sinks);

}  // namespace attnsweep
