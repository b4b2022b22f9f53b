#pragma once
// The inputs of a merge: shard runs read from their databases and checked,
// before anything is written, to be shards of one sweep (the stored config
// re-planned and split as attnsweep run --shard K/N did), one run per shard, in
// one environment. Internal to runner/scale_out/ (merge.cpp).
#include <string>
#include <vector>

#include "runner/plan/plan.hpp"
#include "runner/plan/shard.hpp"
#include "runner/storage/run_reader.hpp"

namespace attnsweep::scale_out {

using storage::CaseRow;
using storage::RunRow;

// As the store: a merge waits this long for another writer rather than fail.
inline constexpr int kBusyTimeoutMs = 10000;

inline std::string shard_label(int index, int count) { return ShardSpec{index, count}.label(); }
inline std::string quoted(const std::string& text) { return "'" + text + "'"; }

// One shard run of an input.
struct ShardSource {
  std::string path;  // the input, as given
  RunRow run;
  std::vector<CaseRow> cases;

  int index() const { return *run.shard_index; }
  int count() const { return *run.shard_count; }
  // "b.db: run 2 (shard 1/3)": how messages begin with it.
  std::string name() const { return path + ": " + run_and_shard(); }
  // "b.db run 2 (shard 1/3)": how messages mention it further on.
  std::string mention() const { return path + " " + run_and_shard(); }
  std::string run_and_shard() const {
    return "run " + std::to_string(run.run_id) + " (shard " + shard_label(index(), count()) + ")";
  }
};

bool is_merged_run(const RunRow& run);
bool is_shard_run(const RunRow& run);

// Every input's shard runs, each read whole (a damaged value is refused naming the file).
std::vector<ShardSource> read_inputs(const std::vector<std::string>& inputs);


// What makes `run` part of another sweep than `reference`, in words; empty when
// both are of one sweep (the same config, shard count, split, launch, device
// kind and timing protocol). Holds for shard runs and merged runs alike.
std::string sweep_difference(const RunRow& run, const RunRow& reference);

// The sweep the shards belong to: its plan and each shard's part of it, as
// attnsweep run --shard K/N computed them from the stored config.
struct Sweep {
  RunRow reference;  // the first input's first run: what the others must match
  Plan plan;
  std::vector<std::vector<int>> parts;  // plan indexes of each shard

  int shard_count() const { return static_cast<int>(parts.size()); }
  int sweep_cases() const { return static_cast<int>(plan.cases.size()); }
};

// The one sweep every source belongs to, each source checked against it; throws BadInputError otherwise.
Sweep check_one_sweep(const std::vector<ShardSource>& sources);


// "a, b, c and 2 more": the first differences of two environments.
std::string first_differences(const std::vector<std::string>& differences);
// Why a merge refuses shards of two environments.
inline constexpr const char* kOneEnvironment =
    "the shards of one merged run must measure in one environment (torch, CUDA, "
    "cuDNN, device, driver, attnsweep and result-changing variables; hosts may "
    "differ), or it compares as one run and hides the difference";

// The output named among the inputs (the same file, under any name) is refused.
void refuse_output_among_inputs(const std::string& out_path, const std::vector<std::string>& inputs);

}  // namespace attnsweep::scale_out
