#pragma once
// One entry of a config's `shapes` (docs/config.md, "Shapes"), also the shape of
// a claim's case (claims.hpp): axes crossed with each other and zipped rows.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "runner/common/errors.hpp"

namespace attnsweep {

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

}  // namespace attnsweep
