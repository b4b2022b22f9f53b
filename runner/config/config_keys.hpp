#pragma once
// The keys each mapping of a config takes, and the largest size any axis takes:
// one list per mapping, shared by the readers of the config's parts and by the
// messages that say where a misplaced key belongs (docs/config.md).
#include <cstdint>
#include <string>
#include <vector>

namespace attnsweep::config_keys {

inline constexpr std::int64_t kMaxDimension = std::int64_t(1) << 24;

inline const std::vector<std::string> kTopLevelKeys = {"name",   "description", "device", "seed",    "variants", "dtypes",
                                                       "causal", "window",      "softcap", "alibi", "sinks", "deterministic", "passes", "shapes",  "exclude", "measure", "claims", "nightly"};
inline const std::vector<std::string> kWindowKeys = {"left", "right"};
inline const char* const kCausalValues = "true (top_left), false, top_left or bottom_right";
// zip last: a zip row takes every key before it but varlen.
inline const std::vector<std::string> kShapeKeys = {"batch",      "heads",    "kv_heads",  "seq_len", "seq_len_q",
                                                    "seq_len_kv", "head_dim", "head_dim_v", "page_size", "varlen", "zip"};
inline const std::vector<std::string> kVarlenKeys = {"seq_len_q", "seq_len_kv"};
inline const std::vector<std::string> kLengthDrawKeys = {"distribution", "min", "max", "mean", "stdev", "seed"};
inline const std::vector<std::string> kOpLibraryKeys = {"name",   "kind",  "library", "op",     "layout",           "causal",
                                                        "scale",  "fixed", "output",  "arguments", "causal_alignment"};
inline const std::vector<std::string> kExcludeKeys = {"variant",  "dtype",   "causal",    "window",   "softcap",  "alibi", "sinks", "deterministic", "pass",
                                                      "batch",    "heads",   "kv_heads",  "seq_len",
                                                      "seq_len_q", "seq_len_kv", "head_dim", "head_dim_v", "page_size"};

}  // namespace attnsweep::config_keys
