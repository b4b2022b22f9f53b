#pragma once
// The score modifications a config sweeps (docs/config.md, "Score
// modifications"): `softcap` (none, a cap above 0, or a list of them), `alibi`
// and `sinks` (true, false or a list of both), each value once in the order
// written (a value written twice counts once); absent: off. The plan sweeps
// their cross product.
#include <yaml-cpp/yaml.h>

#include <optional>
#include <string>
#include <vector>

#include "runner/common/identities.hpp"
#include "runner/common/score_mod.hpp"

namespace attnsweep {

// One softcap value as written at `key`: nullopt for none, else the cap (> 0, at
// most what float32 holds: naive and op libraries take it as a float).
std::optional<double> read_softcap_item(const std::string& source, const YAML::Node& item, const std::string& key);

// An on/off axis (`alibi`, `sinks`) as written at `key`: true, false, or a list
// of them, each once (a value written twice counts once), in the order written; absent: {false}.
std::vector<bool> read_switches(const std::string& source, const YAML::Node& node, const std::string& key);

// The values of an exclude rule's score-modification key `name` (one of
// kScoreModKeys) written at `key`, as ScoreMod::word writes a case's.
std::vector<std::string> read_score_mod_words(const std::string& source, const std::string& name, const YAML::Node& node,
                                              const std::string& key);

// The cross product of `softcap` x `alibi` x `sinks` (kScoreModKeys, read from
// `mapping`: a config's top level or a claim's case; each absent: off) as
// ScoreMods, softcap outermost. `dtypes`: the sweep's; with fp16 a cap above
// 65504 (what fp16 holds) is refused, naming fp16 (a claim's case, read without
// them, is matched against a config that checked its own).
std::vector<ScoreMod> read_score_mods(const std::string& source, const YAML::Node& mapping,
                                      const std::vector<Dtype>& dtypes = {});

}  // namespace attnsweep
