#pragma once
// What a new run is stored from (Store::begin_run): the run's settings and
// environment as the sweep knows them; run_columns.cpp makes its row.
#include <cstdint>
#include <optional>
#include <string>

#include "runner/config/measure_settings.hpp"
#include "runner/device/environment.hpp"

namespace attnsweep::storage {

struct RunRecord {
  std::string name;
  std::string description;
  std::string config_path;
  std::string config_yaml;
  std::string config_sha256;
  EnvironmentInfo environment;
  std::uint64_t seed = 0;
  std::string timing_protocol;
  std::string flop_convention;
  MeasureSettings measure;
  int planned_cases = 0;
  bool isolate = false;
  std::optional<double> ceiling_bf16_tflops;  // measured at run start on the GPU
  std::optional<double> ceiling_copy_gbps;
  std::string run_uuid;  // empty: begin_run draws one
  std::string sweep_id;  // shared by the shards of one launch; empty when none was given
  // A shard run: K of N, what set it (--shard, JOB_COMPLETION_INDEX, ...) and the split's version.
  std::optional<int> shard_index, shard_count;
  std::string shard_source, shard_split;
  int sweep_cases = 0;   // cases in the whole plan (planned_cases counts this run's part)
  std::string gpus;      // --gpus: "cuda:0,cuda:1"; empty for one device
  std::string op_libraries;  // runs.op_libraries: each op library's build (op_library_build.hpp); empty when none
};

}  // namespace attnsweep::storage
