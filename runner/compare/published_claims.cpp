#include "runner/compare/published_claims.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <iomanip>
#include <limits>
#include <sstream>
#include <variant>

#include "runner/common/text.hpp"
#include "runner/report/escaping.hpp"
#include "runner/storage/run_reader.hpp"

namespace attnsweep::compare {
namespace {

// cuDNN's version number as its releases are named (claims name "9.19.0"): 91900 is
// 9.19.0 (major x 10000 from cuDNN 9), 8907 is 8.9.7 (major x 1000 before).
std::string cudnn_release(const std::string& stored) {
  if (stored.empty() || stored.find_first_not_of("0123456789") != std::string::npos || stored.size() > 9) return stored;
  const long number = std::stol(stored);
  const long major_unit = number >= 90000 ? 10000 : 1000;
  return std::to_string(number / major_unit) + "." + std::to_string(number % major_unit / 100) + "." +
         std::to_string(number % 100);
}

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// The GPU model's words that tell models apart ("h100", "h200", "a100", "sxm", "pcie", "80gb"):
// "NVIDIA H100 80GB HBM3" and "H100 SXM" name one model; "H200" another.
std::string gpu_model(const std::string& name) {
  const std::string text = lower(name);
  for (const char* model : {"gb200", "b200", "b100", "h200", "h100", "h800", "gh200", "a100", "a800", "l40s", "l4", "rtx 4090", "mi300x"}) {
    if (text.find(model) != std::string::npos) return model;
  }
  return text;
}

std::string share_percent(double share) { return text::fixed(100 * share, 0) + "%"; }

}  // namespace

std::vector<ClaimLine> read_claim_lines(const storage::RunReader& reader, std::int64_t run_id) {
  std::vector<ClaimLine> lines;
  std::vector<storage::ClaimResult> results;
  try {
    results = reader.claim_results(run_id);
  } catch (const storage::DamagedClaimError& error) {
    // The claim's name as stored text reaches the terminal escaped.
    throw storage::DamagedDatabaseError(error.run + ", claim " + report::terminal_safe(error.claim) + ": " + error.detail);
  }
  for (const storage::ClaimResult& result : results) {
    ClaimLine line;
    static_cast<storage::ClaimResult&>(line) = result;
    if (!line.plan_index) {
      line.verdict = "not measured: " + line.unmatched_reason;
    } else if (line.status.empty()) {
      line.verdict = "not measured: its case is not stored (the run stopped, or another shard ran it)";
    } else if (line.status != "ok") {
      line.verdict = line.status + (line.error_message.empty() ? "" : ": " + text::first_line(line.error_message));
    } else if (!line.ratio) {
      line.verdict = "no ratio: the case has no time or FLOP count";
    } else if (std::abs(*line.ratio - 1) <= kClaimReproducedShare) {
      line.verdict = "reproduced (within " + share_percent(kClaimReproducedShare) + ")";
    } else {
      line.verdict = *line.ratio < 1 ? "below the claim" : "above the claim";
    }
    if (line.status.empty()) {  // nothing measured: nothing to explain
      lines.push_back(std::move(line));
      continue;
    }
    if (!line.claimed_gpu.empty() && !line.device_name.empty() && gpu_model(line.claimed_gpu) != gpu_model(line.device_name)) {
      line.differences.push_back("another GPU: claimed on " + line.claimed_gpu + ", measured on " + line.device_name);
    }
    if (line.status == "ok") {
      if (line.sm_clock_mhz_mean && line.sm_clock_max_mhz && *line.sm_clock_mhz_mean < 0.97 * *line.sm_clock_max_mhz) {
        line.differences.push_back("SM clock " + text::fixed(*line.sm_clock_mhz_mean, 0) + " of " +
                                   text::fixed(*line.sm_clock_max_mhz, 0) + " MHz");
      }
      if (line.power_cap_share && *line.power_cap_share > 0) {
        line.differences.push_back("power-capped in " + share_percent(*line.power_cap_share) + " of samples" +
                                   (line.power_limit_w ? " (limit " + text::fixed(*line.power_limit_w, 0) + " W)" : ""));
      }
      if (line.thermal_cap_share && *line.thermal_cap_share > 0) {
        line.differences.push_back("thermally slowed in " + share_percent(*line.thermal_cap_share) + " of samples");
      }
      if (line.validity == "suspect") line.differences.push_back("suspect: " + line.validity_reasons);
    }
    if (!line.claimed_software.empty()) {
      std::string here = "torch " + (line.torch_version.empty() ? "?" : line.torch_version);
      if (!line.cuda_version.empty()) here += ", CUDA " + line.cuda_version;
      if (!line.cudnn_version.empty()) here += ", cuDNN " + cudnn_release(line.cudnn_version);
      line.differences.push_back("software: claimed " + line.claimed_software + "; here " + here);
    }
    lines.push_back(std::move(line));
  }
  return lines;
}

report::Table claims_table(const std::vector<ClaimLine>& lines) {
  using report::Align;
  using report::Cell;
  report::Table table;
  table.columns = {{"claim"}, {"source"}, {"case"}, {"claimed"}, {"measured"}, {"ratio", "", Align::right},
                   {"verdict"}, {"validity"}, {"differences"}};
  table.columns.back().max_width = 0;
  for (const ClaimLine& line : lines) {
    const bool by_time = line.claimed_time_us.has_value();
    const std::string claimed = by_time ? text::figure(*line.claimed_time_us) + " us"
                                        : text::figure(*line.claimed_tflops) + " TFLOP/s";
    std::string measured;
    if (by_time && line.measured_time_us) {
      measured = text::figure(*line.measured_time_us) + " us";
    } else if (!by_time && line.measured_tflops) {
      measured = text::figure(*line.measured_tflops) + " TFLOP/s";
    }
    table.add_row({Cell::text(line.claims_file + ":" + line.name),
                   Cell::text(line.source_title + (line.source_where.empty() ? "" : ", " + line.source_where) +
                              (line.claimed_gpu.empty() ? "" : " (" + line.claimed_gpu + ")")),
                   Cell::text(line.case_label), Cell::text(claimed), measured.empty() ? Cell::null() : Cell::text(measured),
                   line.ratio ? Cell::real(*line.ratio, 2) : Cell::null(), Cell::text(line.verdict),
                   line.validity.empty() ? Cell::null() : Cell::text(line.validity),
                   Cell::text(text::join(line.differences, "; "))});
  }
  return table;
}

}  // namespace attnsweep::compare
