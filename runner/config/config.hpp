#pragma once
// A validated sweep configuration, as written in the YAML file (docs/config.md).
// The plan (runner/plan) expands it into cases.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "runner/common/case_rules.hpp"
#include "runner/common/errors.hpp"
#include "runner/common/identities.hpp"
#include "runner/common/mask.hpp"
#include "runner/common/score_mod.hpp"
#include "runner/config/claims.hpp"
#include "runner/config/measure_settings.hpp"
#include "runner/config/shape_block.hpp"
#include "runner/variants/op_library_spec.hpp"

namespace attnsweep {

// The shape axes, in the order they are expanded and printed.
inline const std::vector<std::string>& shape_axis_names() {
  static const std::vector<std::string> names = {"batch",      "heads",      "kv_heads",
                                                 "seq_len_q",  "seq_len_kv", "head_dim", "head_dim_v", "page_size"};
  return names;
}

// A case is dropped when every key of one rule matches it; values are strings
// ("bf16", "true", "1024") and any listed value matches.
struct ExcludeRule {
  std::map<std::string, std::vector<std::string>> match;
  SourceLocation where;
};

struct Config {
  std::string source_path;  // the file it came from, for messages
  std::string yaml_text;    // the file's exact text, stored with the run
  std::string name;
  std::string description;
  Device device;  // auto unless the config names one
  std::uint64_t seed = 0;
  std::vector<std::string> variants;                  // in order: catalogue names and op-library names
  std::map<std::string, OpLibrarySpec> op_libraries;  // the variants of kind op_library, by name
  std::vector<Dtype> dtypes;
  // The masks to sweep: `causal` crossed with `window`, each once, in the order
  // written (default: causal top-left, no window).
  std::vector<Mask> masks = {Mask(true)};
  // The score modifications, crossed with the masks: `softcap` x `alibi` x
  // `sinks`, each value once, in the order written (default: none).
  std::vector<ScoreMod> score_mods = {ScoreMod{}};
  // `deterministic`, each value once in the order written (default: off),
  // crossed with the score modifications.
  std::vector<bool> deterministic = {false};
  std::vector<Pass> passes = {Pass::forward};  // what each case times (issue 23); in the order written
  SourceLocation passes_where;                 // where `passes` was written; none when defaulted
  std::vector<ShapeBlock> shapes;
  std::vector<ExcludeRule> exclude;
  MeasureSettings measure;
  SourceLocation shapes_where;
  // `claims` (issue 37): claims files as written, relative to the config's folder;
  // `claims` holds their figures once load_config has read them (claims.hpp).
  std::vector<std::string> claims_files;
  std::vector<ClaimedFigure> claims;
  // `nightly.rules` (issue 38): per-case thresholds and ignores for `attnsweep nightly`.
  std::vector<CaseRule> nightly_rules;
};

// Reads and validates a config file. Throws ConfigError (file:line:column: key:
// message) on the first problem, or BadInputError when the file cannot be read.
Config load_config(const std::string& path);
// A config's (or a claims file's) text: a regular file of at most 16 MiB, else BadInputError saying why.
std::string read_config_file(const std::string& path);
Config parse_config(const std::string& yaml_text, const std::string& source_name);

}  // namespace attnsweep
