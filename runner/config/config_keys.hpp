#pragma once
// The keys each mapping of a config takes, and the largest size any axis takes:
// one list per mapping, shared by the readers of the config's parts and by the
// messages that say where a misplaced key belongs (docs/config.md).
#include <cstdint>
#include <string>
#include <vector>

#include "runner/common/score_mod.hpp"

namespace attnsweep::config_keys {

inline constexpr std::int64_t kMaxDimension = std::int64_t(1) << 24;

// `before`, the score modifications' keys (runner/common/score_mod.hpp), `after`.
inline std::vector<std::string> around_score_mods(std::vector<std::string> before, const std::vector<std::string>& after) {
  before.insert(before.end(), kScoreModKeys.begin(), kScoreModKeys.end());
  before.insert(before.end(), after.begin(), after.end());
  return before;
}

inline const std::vector<std::string> kTopLevelKeys =
    around_score_mods({"name", "description", "device", "seed", "variants", "dtypes", "causal", "window"},
                      {"deterministic", "passes", "shapes", "exclude", "measure", "claims", "nightly"});
inline const std::vector<std::string> kWindowKeys = {"left", "right"};
inline const char* const kCausalValues = "true (top_left), false, top_left or bottom_right";
// zip last: a zip row takes every key before it but varlen.
inline const std::vector<std::string> kShapeKeys = {"batch",      "heads",    "kv_heads",  "seq_len", "seq_len_q",
                                                    "seq_len_kv", "head_dim", "head_dim_v", "page_size", "varlen", "zip"};
inline const std::vector<std::string> kVarlenKeys = {"seq_len_q", "seq_len_kv"};
inline const std::vector<std::string> kLengthDrawKeys = {"distribution", "min", "max", "mean", "stdev", "seed"};
inline const std::vector<std::string> kOpLibraryKeys = {"name",   "kind",  "library", "op",     "layout",           "causal",
                                                        "scale",  "fixed", "output",  "arguments", "causal_alignment"};
inline const std::vector<std::string> kExcludeKeys =
    around_score_mods({"variant", "dtype", "causal", "window"},
                      {"deterministic", "pass", "batch", "heads", "kv_heads", "seq_len", "seq_len_q", "seq_len_kv",
                       "head_dim", "head_dim_v", "page_size"});
// The keys of a claim's case that are not the shape's: a config's axes, one value each.
inline const std::vector<std::string> kCaseAxisKeys =
    around_score_mods({"variant", "dtype", "causal", "window"}, {"deterministic", "pass"});

}  // namespace attnsweep::config_keys
