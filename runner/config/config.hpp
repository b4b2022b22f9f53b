#pragma once
// A validated sweep configuration, as written in the YAML file (docs/config.md).
// The plan (runner/plan) expands it into cases.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "runner/common/errors.hpp"
#include "runner/common/identities.hpp"
#include "runner/common/mask.hpp"
#include "runner/common/score_mod.hpp"
#include "runner/config/measure_settings.hpp"
#include "runner/variants/op_library_spec.hpp"

namespace attnsweep {

// The shape axes, in the order they are expanded and printed.
inline const std::vector<std::string>& shape_axis_names() {
  static const std::vector<std::string> names = {"batch",      "heads",      "kv_heads",
                                                 "seq_len_q",  "seq_len_kv", "head_dim", "head_dim_v", "page_size"};
  return names;
}

// One entry of `shapes`: the product of its axes, times its zipped rows.
struct ShapeBlock {
  std::map<std::string, std::vector<std::int64_t>> axes;         // keys of shape_axis_names()
  std::vector<std::map<std::string, std::int64_t>> zip_rows;     // each row sets axes together
  std::map<std::string, SourceLocation> axis_where;              // where each axis key was written
  SourceLocation where;
  // `varlen`: a variable-length batch, each sequence's query and key/value
  // length (listed, or drawn from the config's seed when it is read); empty
  // for uniform batches. `batch` is then their count.
  std::vector<std::int64_t> varlen_q, varlen_kv;
};

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
};

// Reads and validates a config file. Throws ConfigError (file:line:column: key:
// message) on the first problem, or BadInputError when the file cannot be read.
Config load_config(const std::string& path);
Config parse_config(const std::string& yaml_text, const std::string& source_name);

}  // namespace attnsweep
