// `attnsweep merge` (being written).
#include "runner/cli/commands.hpp"
#include "runner/cli/guarded.hpp"
#include "storage/merge.hpp"

namespace attnsweep::cli {

int merge_command(const MergeOptions& options) {
  return guarded("error: ", [&] {
    storage::merge_shards(options.out_path, options.inputs);
    return static_cast<int>(kExitOk);
  });
}

}  // namespace attnsweep::cli
