#include "runner/execute/run_start.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "runner/common/errors.hpp"
#include "runner/common/log.hpp"
#include "runner/config/measure_reader.hpp"
#include "runner/device/ceilings.hpp"
#include "runner/measure/flops.hpp"
#include "runner/plan/claims_match.hpp"
#include "runner/plan/cost.hpp"
#include "runner/profile/kineto_profiler.hpp"
#include "runner/report/escaping.hpp"
#include "runner/storage/run_reader.hpp"
#include "runner/variants/op_library.hpp"
#include "runner/variants/op_library_build.hpp"

namespace attnsweep::execute {
namespace {

std::string cupti_teardown_note() {
  const std::string kept = KinetoProfiler::cupti_kept_by_user();
  if (kept.empty()) return "; CUPTI torn down after every profiling session";
  return "; CUPTI left attached between profiling sessions (TEARDOWN_CUPTI=" + kept +
         "), host-side times after the first profile include its callbacks";
}

// How a CUDA sample is taken; the L2 flush is optional (runs.l2_flush).
std::string cuda_timing_protocol(const MeasureSettings& measure) {
  return std::string("cuda_event_per_forward_v2: stream synchronized; ") +
         (measure.l2_flush ? "L2 flushed (memset of 2x L2 bytes, queued before the start event); " : "no L2 flush; ") +
         (measure.hide_launch_latency ? "stream held by a blocking kernel while the host enqueues " : "") +
         "start event, one forward, stop event" + (measure.hide_launch_latency ? ", then released" : "") +
         "; stop synchronized; SM clock read (NVML) and samples under throttle_fraction x max clock discarded; " +
         (measure.hide_launch_latency ? "launch latency outside the interval (inter-kernel gaps of the forward inside)"
                                      : "launch latency included") +
         (measure.cuda_graph ? "; also CUDA-graph replays of one captured forward, same protocol" : "") +
         cupti_teardown_note();
}

const char* const kCpuTimingProtocol = "steady_clock_per_forward_v1: wall time of one forward call on the CPU";

// A shape block that sets head_dim_v to a value its head_dim does not have (the
// convention then says how the two dims count): forward runs of equal dims keep their text.
bool gives_value_head_dims(const ShapeBlock& block) {
  std::set<std::int64_t> head_dims, value_dims;
  const auto add = [](const std::map<std::string, std::vector<std::int64_t>>& axes, const std::string& key,
                      std::set<std::int64_t>& into) {
    if (const auto found = axes.find(key); found != axes.end()) into.insert(found->second.begin(), found->second.end());
  };
  add(block.axes, "head_dim", head_dims);
  add(block.axes, "head_dim_v", value_dims);
  for (const auto& row : block.zip_rows) {
    if (row.count("head_dim")) head_dims.insert(row.at("head_dim"));
    if (row.count("head_dim_v")) value_dims.insert(row.at("head_dim_v"));
  }
  return std::any_of(value_dims.begin(), value_dims.end(), [&](std::int64_t dim) { return !head_dims.count(dim) || head_dims.size() > 1; });
}

// The config's claims (issue 37), matched to the plan's cases, into the claims
// table; each unmatched one is a warning naming why.
void store_claims(storage::Store& store, std::int64_t run_id, const std::vector<ClaimMatch>& matches) {
  if (matches.empty()) return;
  std::vector<storage::ClaimRow> rows;
  int matched = 0;
  for (const ClaimMatch& match : matches) {
    const ClaimedFigure& claim = match.claim;
    storage::ClaimRow row;
    row.claims_file = claim.file;
    row.name = claim.name;
    row.source_title = claim.source.title;
    row.source_repository = claim.source.repository;
    row.source_path = claim.source.path;
    row.source_commit = claim.source.commit;
    row.source_url = claim.source.url;
    row.source_where = claim.source.where;
    row.claimed_gpu = claim.gpu;
    for (const auto& [name, version] : claim.software) {
      row.claimed_software += (row.claimed_software.empty() ? "" : ", ") + name + " " + version;
    }
    row.note = claim.note;
    row.variant = claim.claimed_case.variant;
    row.case_label = match.claimed.label();
    row.claimed_tflops = claim.tflops;
    row.claimed_time_us = claim.time_us;
    row.plan_index = match.plan_index;
    row.unmatched_reason = match.unmatched_reason;
    if (match.plan_index) {
      ++matched;
    } else {
      log::warn(report::terminal_safe("claim " + claim.file + ":" + claim.name + " is not measured by this run: " +
                                      match.unmatched_reason));
    }
    rows.push_back(std::move(row));
  }
  store.add_claims(run_id, rows);
  log::info(std::to_string(matched) + " of " + std::to_string(rows.size()) +
            " claims match a case of the run (the claims table; attnsweep report shows each against its claim)");
}

}  // namespace

std::string timing_protocol(const Device& device, const MeasureSettings& measure) {
  return device.is_cuda() ? cuda_timing_protocol(measure) : kCpuTimingProtocol;
}

std::string op_library_builds_of(const Config& config) {
  std::map<std::string, std::string> builds;
  for (const auto& [name, spec] : config.op_libraries) {
    try {
      builds[name] = library_fingerprint(spec.library, op_library_files(spec));  // what the loader loads
    } catch (const std::exception& error) {
      builds[name] = std::string("unreadable: ") + error.what();
    }
  }
  return op_library_builds(builds);
}

std::int64_t begin_new_run(storage::Store& store, const NewRun& run) {
  const Config& config = *run.config;
  log::info("collecting environment for " + run.device.to_string());
  storage::RunRecord record;
  record.name = config.name.empty() ? std::filesystem::path(run.config_path).stem().string() : config.name;
  record.description = config.description;
  record.config_path = run.config_path;
  record.config_yaml = config.yaml_text;
  record.config_sha256 = run.config_sha256;
  record.op_libraries = op_library_builds_of(config);
  record.environment = run.probed ? *run.probed : collect_environment(run.device);
  if (record.environment.other_processes_start > 0) {
    log::warn(std::to_string(record.environment.other_processes_start) + " other process(es) compute on " +
              run.device.to_string() + " (NVML" +
              (record.environment.gpu_utilization_start_pct >= 0
                   ? ", GPU utilization " + std::to_string(static_cast<int>(record.environment.gpu_utilization_start_pct)) + "%"
                   : std::string()) +
              "): times measured now are not this GPU's alone; each such case is marked, and compare and "
              "nightly call them inconclusive instead of judging them");
  }
  if (const std::string warning = counters_warning(config.measure, run.device); !warning.empty()) log::warn(warning);
  record.seed = config.seed;
  record.timing_protocol = timing_protocol(run.device, config.measure);
  if (run.device.is_cuda() && !run.isolate && run.gpus.empty()) {
    log::info("measuring device ceilings (bf16 matmul, device-to-device copy)");
    const DeviceCeilings ceilings = measure_ceilings(run.device);
    record.ceiling_bf16_tflops = ceilings.bf16_tflops;
    record.ceiling_copy_gbps = ceilings.copy_gbps;
  }
  ConventionFacts facts;
  facts.backward_passes = std::any_of(config.passes.begin(), config.passes.end(), [](Pass pass) { return pass != Pass::forward; });
  facts.serving_masks = std::any_of(config.masks.begin(), config.masks.end(), [](const Mask& mask) {
    return mask.windowed() || mask.causal == CausalAlignment::bottom_right;
  });
  facts.variable_lengths = std::any_of(config.shapes.begin(), config.shapes.end(),
                                       [](const ShapeBlock& block) { return !block.varlen_kv.empty(); });
  facts.value_head_dims = std::any_of(config.shapes.begin(), config.shapes.end(), gives_value_head_dims);
  for (const ScoreMod& scores : config.score_mods) {
    for (std::size_t i = 0; i < kScoreModKeys.size(); ++i) {
      if (scores.has(i)) facts.score_mods.insert(kScoreModKeys[i]);
    }
  }
  facts.fp8 = std::any_of(config.dtypes.begin(), config.dtypes.end(), [](Dtype dtype) { return is_fp8(dtype); });
  record.flop_convention = flop_convention(facts);
  record.measure = config.measure;
  record.planned_cases = run.planned_cases;
  record.sweep_cases = run.sweep_cases;
  record.isolate = run.isolate;
  record.sweep_id = run.sweep_id;
  if (run.shard) {
    record.shard_index = run.shard->spec.index;
    record.shard_count = run.shard->spec.count;
    record.shard_source = run.shard->source;
    record.shard_split = kShardSplitVersion;
  }
  std::string where = run.device.to_string();
  for (std::size_t i = 0; i < run.gpus.size(); ++i) record.gpus += (i ? "," : "") + run.gpus[i].to_string();
  if (!run.gpus.empty()) where = record.gpus;
  const std::int64_t run_id = store.begin_run(record);
  if (run.gpus.empty()) store.add_run_device(run_id, {record.environment, record.ceiling_bf16_tflops, record.ceiling_copy_gbps});
  store_claims(store, run_id, run.claims);
  log::info("run " + std::to_string(run_id) + " '" + record.name + "': " + std::to_string(run.planned_cases) +
            " cases on " + where + " (" + record.environment.device_name + ")" +
            (run.shard ? ", shard " + run.shard->spec.label() + " (from " + run.shard->source + ") of a sweep of " +
                             std::to_string(run.sweep_cases) + " cases"
                       : "") +
            (run.gpus.size() > 1 ? ", one worker process per GPU" : "") +
            (run.isolate ? ", one worker process per case" : ""));
  return run_id;
}

std::int64_t run_to_resume(const storage::ReadableDatabase& database, const std::string& wanted,
                           const std::string& config_path, const std::string& config_sha256, const Device& device,
                           const std::optional<ShardSpec>& shard, bool with_gpus,
                           const std::optional<std::string>& sweep_id, const std::string& op_libraries) {
  const storage::RunReader& reader = database.reader();  // of the copy, when one was made
  std::optional<std::int64_t> wanted_id;
  if (wanted != "latest") {
    try {
      std::size_t used = 0;
      wanted_id = std::stoll(wanted, &used);
      if (used != wanted.size()) throw std::invalid_argument("trailing");
    } catch (const std::exception&) {
      throw BadInputError("--resume takes a run id or 'latest', got '" + wanted + "'");
    }
  }
  std::optional<storage::RunRow> run = wanted_id ? reader.run(*wanted_id) : reader.latest_run();
  if (!wanted_id && shard) {
    // One database may hold several shards' runs: "latest" is the latest of this shard.
    run.reset();
    for (const auto& candidate : reader.runs()) {
      if (candidate.shard_index == shard->index && candidate.shard_count == shard->count &&
          candidate.shard_source != "merge") {
        run = candidate;
      }
    }
    if (!run) {
      throw BadInputError(database.path() + ": no run of shard " + shard->label() +
                          " to resume; run without --resume to start one");
    }
  }
  if (!run) {
    throw BadInputError(database.path() + ": no run " + (wanted_id ? std::to_string(*wanted_id) : std::string("at all")) +
                        " to resume; run without --resume to start one");
  }
  if (run->config_sha256 != config_sha256) {
    throw BadInputError("run " + std::to_string(run->run_id) + " was made from a different config (sha256 " +
                        run->config_sha256.substr(0, 12) + ", now " + config_sha256.substr(0, 12) + " for " +
                        config_path + "); resume with the same file, or start a new run without --resume");
  }
  // Empty where unknown: a run of schema 21 or older, or a config without op libraries.
  if (!run->op_libraries.empty() && !op_libraries.empty() && run->op_libraries != op_libraries) {
    throw BadInputError("run " + std::to_string(run->run_id) + " loaded other op library builds (" + run->op_libraries +
                        ") than " + config_path + "'s libraries are now (" + op_libraries +
                        "): rebuilt or replaced since the run started, its remaining cases would measure another "
                        "kernel; put the run's build back, or start a new run without --resume");
  }
  if (sweep_id && *sweep_id != run->sweep_id) {
    throw BadInputError("--sweep-id " + *sweep_id + ": run " + std::to_string(run->run_id) + " has " +
                        (run->sweep_id.empty() ? std::string("no sweep id") : "sweep id " + run->sweep_id) +
                        ", which --resume keeps; leave --sweep-id out (or give the run's)");
  }
  const auto stored_shard = run->shard_index && run->shard_count && run->shard_source != "merge"
                                ? std::optional<ShardSpec>(ShardSpec{*run->shard_index, *run->shard_count})
                                : std::nullopt;
  if (stored_shard != shard) {
    const std::string id = "run " + std::to_string(run->run_id);
    if (!stored_shard) throw BadInputError(id + " is not a shard; resume it without --shard (and without a scheduler's shard index)");
    throw BadInputError(id + " is shard " + stored_shard->label() + (shard ? ", not " + shard->label() : ", and this run is no shard") +
                        "; resume it as the same shard (--shard " + stored_shard->label() + ")");
  }
  if (!run->gpus.empty() || with_gpus) {
    if (run->gpus.empty() || !with_gpus) {
      throw BadInputError("run " + std::to_string(run->run_id) + (run->gpus.empty() ? " ran on one device (" + run->device.to_string() + "); resume it without --gpus"
                                                                                   : " ran with --gpus (" + run->gpus + "); resume it with --gpus"));
    }
    return run->run_id;  // any GPUs: each case records the one that measured it
  }
  if (run->device != device) {
    throw BadInputError("run " + std::to_string(run->run_id) + " ran on " + run->device.to_string() + ", not " +
                        device.to_string() + "; resume it on the same device (--device " + run->device.to_string() +
                        ")");
  }
  return run->run_id;
}

}  // namespace attnsweep::execute
