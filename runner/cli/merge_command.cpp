// `attnsweep merge OUT.db IN.db...`: the shard databases of one sweep into one
// run of OUT.db (runner/scale_out/merge.hpp). Prints one line per shard and where the
// merged run stands; exit 3 (kExitIncomplete) while shards or cases are missing.
#include <iostream>
#include <string>
#include <vector>

#include "runner/cli/commands.hpp"
#include "runner/cli/guarded.hpp"
#include "runner/plan/shard.hpp"
#include "runner/scale_out/merge.hpp"

namespace attnsweep::cli {
namespace {

using scale_out::MergeReport;
using scale_out::ShardMerge;

// Lists past this many labels end in "and N more": a sweep may have thousands of shards.
constexpr std::size_t kListedLabels = 20;

std::string cases(int count) { return std::to_string(count) + (count == 1 ? " case" : " cases"); }

std::string label(const ShardMerge& shard, int count) { return ShardSpec{shard.index, count}.label(); }

// "1/3, 2/3" (and how many more).
std::string listed(const std::vector<std::string>& labels) {
  std::string text;
  for (std::size_t i = 0; i < labels.size() && i < kListedLabels; ++i) text += (i ? ", " : "") + labels[i];
  if (labels.size() > kListedLabels) text += " and " + std::to_string(labels.size() - kListedLabels) + " more";
  return text;
}

// "shard 0/3: merged 2 cases from s0.db (run 1, done)", "shard 2/3: missing", ...
std::string shard_line(const ShardMerge& shard, int count) {
  const std::string head = "shard " + label(shard, count) + ": ";
  if (shard.state == ShardMerge::State::missing) return head + "missing";
  const std::string from = " from " + shard.source_db + " (run " + std::to_string(shard.source_run_id) + ", " +
                           shard.source_status + ")";
  const std::string progress =
      shard.complete() ? "" : ": " + std::to_string(shard.merged_cases) + " of " + cases(shard.planned_cases) + " so far";
  switch (shard.state) {
    case ShardMerge::State::merged: return head + "merged " + cases(shard.cases_added) + from + progress;
    case ShardMerge::State::already_merged: return head + "already merged" + from + ", nothing new" + progress;
    default: return head + "merged earlier" + from + progress;
  }
}

// "run 4 in out.db: done, 6 cases", or what is missing and what to do.
std::string summary_line(const std::string& out_path, const MergeReport& report) {
  const std::string head = "run " + std::to_string(report.run_id) + " in " + out_path + ": ";
  if (report.status == RunStatus::done) return head + "done, " + cases(report.merged_cases);
  std::vector<std::string> missing, partial;
  for (const ShardMerge& shard : report.shards) {
    if (shard.state == ShardMerge::State::missing) {
      missing.push_back(label(shard, report.shard_count));
    } else if (!shard.complete()) {
      partial.push_back(label(shard, report.shard_count) + " (" + std::to_string(shard.merged_cases) + " of " +
                        cases(shard.planned_cases) + ", its run " + shard.source_status + ")");
    }
  }
  std::string line = head + "incomplete: ";
  if (!missing.empty()) {
    line += (missing.size() == 1 ? "shard " : "shards ") + listed(missing) + " missing; merge " +
            (missing.size() == 1 ? "it when it arrives" : "them when they arrive");
  }
  if (!partial.empty()) {
    line += std::string(missing.empty() ? "" : "; ") + (partial.size() == 1 ? "shard " : "shards ") + listed(partial) +
            " not finished; finish " + (partial.size() == 1 ? "it" : "each") +
            " with attnsweep run CONFIG --shard K/N --resume --db ITS.db and merge again";
  }
  return line;
}

}  // namespace

int merge_command(const MergeOptions& options) {
  return guarded("error: ", [&] {
    const MergeReport report = scale_out::merge_shards(options.out_path, options.inputs);
    for (const ShardMerge& shard : report.shards) std::cout << shard_line(shard, report.shard_count) << "\n";
    std::cout << summary_line(options.out_path, report) << std::endl;
    return static_cast<int>(report.status == RunStatus::done ? kExitOk : kExitIncomplete);
  });
}

}  // namespace attnsweep::cli
