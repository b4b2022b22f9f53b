#pragma once
// `attnsweep collect hf://buckets/ORG/NAME/PREFIX OUT.db`: the shard databases
// the jobs of a launch published into their bucket folder, brought here with
// `hf buckets sync` and merged into one run of OUT.db (runner/scale_out/merge.hpp).
// docs/hf-jobs.md.
#include <string>
#include <vector>

#include "runner/jobs/bucket.hpp"
#include "runner/jobs/hf_cli.hpp"
#include "runner/scale_out/merge.hpp"

namespace attnsweep::jobs {

struct CollectRequest {
  std::string source;    // hf://buckets/ORG/NAME/PREFIX
  std::string out_path;  // the database to merge into
  std::string keep_dir;  // "" to sync into a temporary folder removed afterwards
};

struct CollectResult {
  BucketFolder source;
  std::string directory;                 // where the folder was synced
  std::vector<std::string> shard_files;  // the shard-K-of-N.db found there, by K
  bool merged = false;                   // false when there was no shard database to merge
  scale_out::MergeReport report;
};

// Syncs the folder (only its shard databases unless keep_dir is given: then
// everything, traces too, stays in keep_dir) and merges every shard-K-of-N.db
// found at its top. Merge records each shard's file by that name. Throws
// std::runtime_error when hf fails, BadInputError for a bad URL and for what
// merge refuses.
CollectResult collect_shards(const HfCli& hf, const CollectRequest& request);

}  // namespace attnsweep::jobs
