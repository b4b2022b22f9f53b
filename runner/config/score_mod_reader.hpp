#pragma once
// The score modifications a config sweeps (docs/config.md, "Score
// modifications"): `softcap` (none, a cap above 0, or a list of them), each once
// in the order written; absent: none.
#include <yaml-cpp/yaml.h>

#include <optional>
#include <string>
#include <vector>

#include "runner/common/score_mod.hpp"

namespace attnsweep {

// One softcap value as written at `key`: nullopt for none, else the cap (> 0, finite).
std::optional<double> read_softcap_item(const std::string& source, const YAML::Node& item, const std::string& key);

// Every softcap of `softcap` (the top-level key; absent: {none}) as a ScoreMod, each once.
std::vector<ScoreMod> read_score_mods(const std::string& source, const YAML::Node& softcap);

}  // namespace attnsweep
