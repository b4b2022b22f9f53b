// `attnsweep collect hf://buckets/ORG/NAME/PREFIX OUT.db [--keep DIR]`: the
// shard databases a launch published, synced here and merged into one run of
// OUT.db (runner/jobs/collect.hpp). One line per shard, naming those missing
// and those whose run did not finish; exit codes as merge: 0 done, 3
// incomplete, 2 refused; 1 when hf fails.
#include <iostream>
#include <string>
#include <vector>

#include "runner/cli/commands.hpp"
#include "runner/cli/guarded.hpp"
#include "runner/common/text.hpp"
#include "runner/jobs/collect.hpp"
#include "runner/jobs/hf_commands.hpp"
#include "runner/plan/shard.hpp"
#include "runner/storage/database_files.hpp"

namespace attnsweep::cli {
namespace {

using scale_out::ShardMerge;

std::string cases(int count) { return std::to_string(count) + (count == 1 ? " case" : " cases"); }

// "shard 1/3: merged 4 cases from shard-1-of-3.db (run 1, done)", or why it is not whole.
std::string shard_line(const jobs::CollectResult& collected, const ShardMerge& shard) {
  const std::string label = ShardSpec{shard.index, collected.report.shard_count}.label();
  const std::string head = "shard " + label + ": ";
  if (shard.state == ShardMerge::State::missing) {
    return head + "missing: no " + jobs::shard_database_name({shard.index, collected.report.shard_count}) + " in " +
           collected.source.uri() + " (its job failed before publishing, or has not ended: see its logs)";
  }
  const std::string from = " from " + shard.source_db + " (run " + std::to_string(shard.source_run_id) + ", " +
                           shard.source_status + ")";
  std::string line = head;
  switch (shard.state) {
    case ShardMerge::State::merged: line += "merged " + cases(shard.cases_added) + from; break;
    case ShardMerge::State::already_merged: line += "already merged" + from + ", nothing new"; break;
    default: line += "merged earlier" + from; break;
  }
  if (!shard.complete()) {
    line += ": " + std::to_string(shard.merged_cases) + " of " + cases(shard.planned_cases) + "; its run ended " +
            shard.source_status + " (see its job's logs)";
  }
  return line;
}

std::string summary_line(const std::string& out_path, const scale_out::MergeReport& report) {
  const std::string head = "run " + std::to_string(report.run_id) + " in " + out_path + ": ";
  if (report.status == RunStatus::done) return head + "done, " + cases(report.merged_cases);
  std::vector<std::string> missing, unfinished;
  for (const ShardMerge& shard : report.shards) {
    const std::string label = ShardSpec{shard.index, report.shard_count}.label();
    if (shard.state == ShardMerge::State::missing) {
      missing.push_back(label);
    } else if (!shard.complete()) {
      unfinished.push_back(label + " (" + shard.source_status + ")");
    }
  }
  std::string line = head + "incomplete, " + std::to_string(report.merged_cases) + " of " +
                     cases(report.sweep_cases);
  if (!missing.empty()) line += "; missing: " + text::join(missing, ", ");
  if (!unfinished.empty()) line += "; not finished: " + text::join(unfinished, ", ");
  return line + "; collect again when they arrive";
}

}  // namespace

int collect_command(const CollectOptions& options) {
  return guarded("error: ", [&] {
    storage::refuse_side_file_name(options.out_path);  // before anything is fetched
    const jobs::HfCli hf = jobs::HfCli::find();
    const jobs::CollectResult collected =
        jobs::collect_shards(hf, {options.source, options.out_path, options.keep_dir});
    if (!collected.merged) {
      std::cout << "no shard database (shard-K-of-N.db) in " << collected.source.uri()
                << " yet; nothing merged" << std::endl;
      return static_cast<int>(kExitIncomplete);
    }
    for (const ShardMerge& shard : collected.report.shards) std::cout << shard_line(collected, shard) << "\n";
    std::cout << summary_line(options.out_path, collected.report) << std::endl;
    return static_cast<int>(collected.report.status == RunStatus::done ? kExitOk : kExitIncomplete);
  });
}

}  // namespace attnsweep::cli
