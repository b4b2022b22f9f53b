#pragma once
// How a merged run is told from a shard run: its runs.shard_source
// (docs/scale-out.md). Written by merge, read by its input checks.

namespace attnsweep::scale_out {

// runs.shard_source of a merged run.
inline constexpr const char* kMergedRunSource = "merge";

}  // namespace attnsweep::scale_out
