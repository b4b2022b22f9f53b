#include "runner/run_report/run_report.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <tuple>

#include "runner/common/errors.hpp"
#include "runner/common/text.hpp"
#include "runner/plan/case_axes.hpp"
#include "runner/storage/store.hpp"
#include "runner/storage/trace_location.hpp"

namespace attnsweep::run_report {
namespace {

namespace fs = std::filesystem;

// The shares of the ceilings per case, as the results view computes them (the
// GPU's own ceilings from run_devices, else the run's).
struct CeilingShares {
  std::optional<double> tflops, bandwidth, dram;
};
std::map<std::int64_t, CeilingShares> ceiling_shares(const storage::RunReader& reader, std::int64_t run_id) {
  std::map<std::int64_t, CeilingShares> shares;
  for (const storage::CaseShares& row : reader.case_shares(run_id)) {
    shares[row.case_id] = {row.tflops_share, row.bandwidth_share, row.dram_bandwidth_share};
  }
  return shares;
}

// The highest ceilings any GPU of the run measured (a --gpus run keeps them per GPU only).
std::pair<std::optional<double>, std::optional<double>> device_ceilings(const storage::RunReader& reader,
                                                                        std::int64_t run_id) {
  std::pair<std::optional<double>, std::optional<double>> ceilings;
  const auto take_max = [](std::optional<double>& highest, const std::optional<double>& value) {
    if (value && (!highest || *value > *highest)) highest = value;
  };
  for (const storage::RunDevice& device : reader.run_devices(run_id)) {
    take_max(ceilings.first, device.ceiling_bf16_tflops);
    take_max(ceilings.second, device.ceiling_copy_gbps);
  }
  return ceilings;
}

std::string number(const std::optional<double>& value, int digits, const std::string& unit) {
  return value ? text::fixed(*value, digits) + unit : "";
}

// "1980 / 2619 MHz", with "?" for the clock not recorded; empty when neither is.
std::string clocks(const std::optional<double>& sm_mhz, const std::optional<double>& memory_mhz) {
  if (!sm_mhz && !memory_mhz) return "";
  return (sm_mhz ? number(sm_mhz, 0, "") : "?") + " / " + (memory_mhz ? number(memory_mhz, 0, "") : "?") + " MHz";
}

std::vector<std::pair<std::string, std::string>> environment_of(const storage::RunRow& run) {
  std::vector<std::pair<std::string, std::string>> facts = {
      {"device", run.device_name.empty() ? run.device.to_string() : run.device_name + " (" + run.device.to_string() + ")"},
      {"GPUs", run.gpus},
      {"host", run.hostname},
      {"driver", run.driver_version},
      {"CUDA", run.cuda_version},
      {"cuDNN", run.cudnn_version},
      {"torch", run.torch_version},
      {"attnsweep", run.attnsweep_version + (run.git_sha.empty() ? "" : " (" + run.git_sha + ")")},
      {"container image", run.container_image},
      {"op libraries", run.op_libraries},
      {"power limit", number(run.power_limit_w, 0, " W")},
      {"SM / memory clock at start", clocks(run.sm_clock_start_mhz, run.mem_clock_start_mhz)},
      {"temperature at start", number(run.temperature_start_c, 0, " °C")},
      {"measured bf16 matmul ceiling", number(run.ceiling_bf16_tflops, 1, " TFLOP/s")},
      {"measured copy ceiling", number(run.ceiling_copy_gbps, 0, " GB/s")},
      {"regime", run.measure_regime},
      {"timing protocol", run.timing_protocol},
      {"FLOP convention", run.flop_convention},
      {"seed", std::to_string(run.seed)},
      {"environment variables", run.env_vars == "{}" ? "" : run.env_vars},
      {"config", run.config_path + (run.config_sha256.empty() ? "" : " (sha256 " + run.config_sha256.substr(0, 12) + ")")},
      {"shard", run.shard_count ? (run.shard_index ? std::to_string(*run.shard_index) + "/" : std::string("merged from ")) +
                                      std::to_string(*run.shard_count)
                                : ""},
  };
  facts.erase(std::remove_if(facts.begin(), facts.end(), [](const auto& fact) { return fact.second.empty(); }),
              facts.end());
  return facts;
}

std::string link_from(const std::string& output_path, const std::string& file) {
  if (file.empty()) return "";
  const fs::path folder =
      output_path.empty() || output_path == "-" ? fs::current_path() : fs::absolute(output_path).parent_path();
  return fs::absolute(file).lexically_normal().lexically_relative(folder.lexically_normal()).generic_string();
}

std::int64_t chosen_run(const storage::RunReader& reader, const ReportRequest& request) {
  const std::vector<storage::RunRow> runs = reader.runs();
  if (runs.empty()) throw BadInputError(request.db_path + ": holds no run yet");
  if (!request.run_id) return runs.back().run_id;
  if (!reader.run(*request.run_id)) {
    std::vector<std::string> ids;
    for (const auto& run : runs) ids.push_back(std::to_string(run.run_id));
    throw BadInputError(request.db_path + ": has no run " + std::to_string(*request.run_id) + "; its runs: " +
                        text::join(ids, ", ") + " (--run latest, the default, takes the newest)");
  }
  return *request.run_id;
}

}  // namespace

int RunReport::count(CaseStatus status) const {
  return static_cast<int>(std::count_if(cases.begin(), cases.end(), [&](const auto& c) { return c.row.status == status; }));
}

int RunReport::failed() const {
  return static_cast<int>(cases.size()) - count(CaseStatus::ok) - count(CaseStatus::unsupported);
}

std::vector<Pass> RunReport::passes() const {
  std::vector<Pass> found;
  for (const Pass pass : {Pass::forward, Pass::backward, Pass::forward_backward}) {
    if (std::any_of(cases.begin(), cases.end(), [&](const auto& c) { return c.row.identity.pass == pass; })) {
      found.push_back(pass);
    }
  }
  return found;
}

bool RunReport::by_pass() const {
  return std::any_of(cases.begin(), cases.end(), [](const auto& c) { return c.row.identity.pass != Pass::forward; });
}

bool RunReport::has_energy() const {
  return std::any_of(cases.begin(), cases.end(), [](const auto& c) { return c.row.energy_j.has_value(); });
}

RunReport build_run_report(const ReportRequest& request) {
  const auto database = storage::open_readable(request.db_path, "");
  const storage::RunReader& reader = database->reader();
  const std::int64_t run_id = chosen_run(reader, request);
  RunReport report;
  report.db_path = request.db_path;
  report.run = *reader.run(run_id);
  report.environment = environment_of(report.run);
  report.generated_at = storage::utc_now_iso8601();
  report.trace_url_base = request.trace_url_base;
  while (!report.trace_url_base.empty() && report.trace_url_base.back() == '/') report.trace_url_base.pop_back();
  report.ceiling_tflops = report.run.ceiling_bf16_tflops;
  report.ceiling_gbps = report.run.ceiling_copy_gbps;
  if (!report.ceiling_tflops || !report.ceiling_gbps) {
    const auto [tflops, gbps] = device_ceilings(reader, run_id);
    if (!report.ceiling_tflops) report.ceiling_tflops = tflops;
    if (!report.ceiling_gbps) report.ceiling_gbps = gbps;
  }
  report.claims = compare::read_claim_lines(reader, run_id);
  report.choices = compare::read_choices(reader, run_id);
  const auto shares = ceiling_shares(reader, run_id);
  for (storage::CaseRow& row : reader.cases(run_id)) {
    ReportCase c;
    c.kernels = reader.kernels(row.case_id);
    if (const auto share = shares.find(row.case_id); share != shares.end()) {
      c.tflops_share = share->second.tflops;
      c.bandwidth_share = share->second.bandwidth;
      c.dram_share = share->second.dram;
    }
    // The trace from the file the user named, not a migrated copy of it.
    c.trace_file = storage::trace_file_of(request.db_path, report.run.trace_path_base, row.trace_path);
    c.trace_exists = !c.trace_file.empty() && fs::is_regular_file(c.trace_file);
    c.trace_link = link_from(request.output_path, c.trace_file);
    c.row = std::move(row);
    report.cases.push_back(std::move(c));
  }
  // Naive's case of the same measurement but for the variant (every other axis,
  // runner/plan/case_axes.hpp: a backward is compared with naive's backward, a
  // soft-capped case with naive's soft-capped one).
  std::map<Case, double, SameButVariantLess> naive_median;
  for (const auto& c : report.cases) {
    if (c.row.identity.variant == kBaselineVariant && c.row.status == CaseStatus::ok && c.row.median_us()) {
      naive_median[c.row.identity] = *c.row.median_us();
    }
  }
  for (auto& c : report.cases) {
    const auto naive = naive_median.find(c.row.identity);
    if (naive != naive_median.end() && c.row.status == CaseStatus::ok && c.row.median_us() && *c.row.median_us() > 0) {
      c.speedup_over_naive = naive->second / *c.row.median_us();
    }
  }
  if (!request.compare_with.empty()) {
    const compare::RunArgument previous = compare::parse_run_argument(request.compare_with, "--compare");
    const auto other = storage::open_readable(previous.path, "--compare");
    const std::int64_t previous_run = compare::resolve_run(other->reader(), previous, "--compare");
    report.comparison = compare::compare_runs(other->reader(), previous_run, reader, run_id);
    report.comparison->baseline.path = previous.path;
    report.comparison->candidate.path = request.db_path;
    std::map<std::int64_t, const compare::CaseComparison*> by_case;
    for (const auto& compared : report.comparison->cases) by_case[compared.candidate_case_id] = &compared;
    for (auto& c : report.cases) {
      const auto found = by_case.find(c.row.case_id);
      if (found == by_case.end()) continue;
      c.previous = *found->second;
      const auto& time = found->second->time;
      if (time.baseline_median_us && time.candidate_median_us && *time.candidate_median_us > 0) {
        c.speedup_over_previous = *time.baseline_median_us / *time.candidate_median_us;
      }
    }
  }
  return report;
}

}  // namespace attnsweep::run_report
