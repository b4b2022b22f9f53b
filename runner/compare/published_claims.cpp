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
#include "runner/storage/query_values.hpp"
#include "runner/storage/run_reader.hpp"

namespace attnsweep::compare {
namespace {

using storage::QueryValue;

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

// A stored value as the damaged-database messages show one (runner/storage/fields.hpp):
// NULL, -5, 0.5, 'fast' (at most 60 characters, control characters as '?').
std::string shown(const QueryValue& value) {
  if (std::holds_alternative<std::monostate>(value)) return "NULL";
  if (const auto* integer = std::get_if<std::int64_t>(&value)) return std::to_string(*integer);
  if (const auto* real = std::get_if<double>(&value)) {
    std::ostringstream text;
    text << std::setprecision(15) << *real;
    return text.str();
  }
  std::string text = std::get<std::string>(value);
  const bool cut = text.size() > 60;
  if (cut) text.resize(60);
  for (char& c : text) c = (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? '?' : c;
  return "'" + text + (cut ? "...'" : "'");
}

// The claims table's values held to what the store writes (the schema's CHECKs, which
// a database written with them off, or by another tool, need not keep): a claimed
// figure above 0, at least one of the two, a plan_index that is a case's. Anything
// else is a damaged database, refused as the cases' values are (run_reader.cpp):
// "FILE: run N, claim FILE:NAME: claims.COLUMN = VALUE: allowed: WHAT".
class ClaimValues {
 public:
  ClaimValues(const std::string& db_path, std::int64_t run_id, const std::string& claim)
      : where_(db_path + ": run " + std::to_string(run_id) + ", claim " + claim + ": claims.") {}

  std::optional<double> figure(const QueryValue& value, const char* column, const char* other_column,
                               bool other_present) const {
    if (std::holds_alternative<std::monostate>(value)) {
      if (!other_present) {
        refuse(column, value, std::string("a number > 0 (") + other_column + " is NULL too, and a claim has a figure)");
      }
      return std::nullopt;
    }
    if (std::holds_alternative<std::string>(value)) refuse(column, value, "a number > 0", "text");
    const double number = *storage::query_real(value);
    if (!std::isfinite(number) || number <= 0) refuse(column, value, "a number > 0");
    return number;
  }

  std::optional<int> plan_index(const QueryValue& value) const {
    if (std::holds_alternative<std::monostate>(value)) return std::nullopt;
    const auto* integer = std::get_if<std::int64_t>(&value);
    if (!integer) {
      refuse("plan_index", value, "a whole number >= 0", std::holds_alternative<double>(value) ? "real" : "text");
    }
    if (*integer < 0 || *integer > std::numeric_limits<int>::max()) refuse("plan_index", value, "a whole number >= 0");
    return static_cast<int>(*integer);
  }

 private:
  [[noreturn]] void refuse(const std::string& column, const QueryValue& value, const std::string& allowed,
                           const std::string& wrong_type = "") const {
    throw storage::DamagedDatabaseError(where_ + column + " = " + shown(value) +
                                        (wrong_type.empty() ? "" : " (" + wrong_type + ")") + ": allowed: " + allowed);
  }
  std::string where_;
};

}  // namespace

std::vector<ClaimLine> read_claim_lines(const std::string& db_path, std::int64_t run_id) {
  std::vector<ClaimLine> lines;
  const std::string sql =
      "SELECT claims_file, name, source_title, source_where, source_url, claimed_gpu, claimed_software, variant, "
      "case_label, claimed_tflops, claimed_time_us, plan_index, unmatched_reason, status, error_message, "
      "measured_tflops, measured_time_us, claim_ratio, validity, validity_reasons, device_name, sm_clock_mhz_mean, "
      "sm_clock_max_mhz, power_cap_share, thermal_cap_share, power_limit_w, torch_version, cuda_version, "
      "cudnn_version FROM claim_results WHERE run_id = " + std::to_string(run_id) + " ORDER BY claim_id";
  storage::run_query(db_path, sql, [](const std::vector<std::string>&) {}, [&](const std::vector<QueryValue>& row) {
    ClaimLine line;
    line.claims_file = storage::query_text(row[0]);
    line.name = storage::query_text(row[1]);
    line.source_title = storage::query_text(row[2]);
    line.source_where = storage::query_text(row[3]);
    line.source_url = storage::query_text(row[4]);
    line.claimed_gpu = storage::query_text(row[5]);
    line.claimed_software = storage::query_text(row[6]);
    line.variant = storage::query_text(row[7]);
    line.case_label = storage::query_text(row[8]);
    const ClaimValues values(db_path, run_id, report::terminal_safe(line.claims_file + ":" + line.name));
    const bool has_tflops = !std::holds_alternative<std::monostate>(row[9]);
    const bool has_time = !std::holds_alternative<std::monostate>(row[10]);
    line.claimed_tflops = values.figure(row[9], "claimed_tflops", "claimed_time_us", has_time);
    line.claimed_time_us = values.figure(row[10], "claimed_time_us", "claimed_tflops", has_tflops);
    line.plan_index = values.plan_index(row[11]);
    line.unmatched_reason = storage::query_text(row[12]);
    line.status = storage::query_text(row[13]);
    line.error_message = storage::query_text(row[14]);
    line.measured_tflops = storage::query_real(row[15]);
    line.measured_time_us = storage::query_real(row[16]);
    line.ratio = storage::query_real(row[17]);
    line.validity = storage::query_text(row[18]);
    line.validity_reasons = storage::query_text(row[19]);
    line.device_name = storage::query_text(row[20]);
    const auto clock = storage::query_real(row[21]), clock_max = storage::query_real(row[22]);
    const auto power_cap = storage::query_real(row[23]), thermal_cap = storage::query_real(row[24]), power_limit = storage::query_real(row[25]);
    const std::string torch = storage::query_text(row[26]), cuda = storage::query_text(row[27]), cudnn = storage::query_text(row[28]);

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
      return;
    }
    if (!line.claimed_gpu.empty() && !line.device_name.empty() && gpu_model(line.claimed_gpu) != gpu_model(line.device_name)) {
      line.differences.push_back("another GPU: claimed on " + line.claimed_gpu + ", measured on " + line.device_name);
    }
    if (line.status == "ok") {
      if (clock && clock_max && *clock < 0.97 * *clock_max) {
        line.differences.push_back("SM clock " + text::fixed(*clock, 0) + " of " + text::fixed(*clock_max, 0) + " MHz");
      }
      if (power_cap && *power_cap > 0) {
        line.differences.push_back("power-capped in " + share_percent(*power_cap) + " of samples" +
                                   (power_limit ? " (limit " + text::fixed(*power_limit, 0) + " W)" : ""));
      }
      if (thermal_cap && *thermal_cap > 0) line.differences.push_back("thermally slowed in " + share_percent(*thermal_cap) + " of samples");
      if (line.validity == "suspect") line.differences.push_back("suspect: " + line.validity_reasons);
    }
    if (!line.claimed_software.empty()) {
      std::string here = "torch " + (torch.empty() ? "?" : torch);
      if (!cuda.empty()) here += ", CUDA " + cuda;
      if (!cudnn.empty()) here += ", cuDNN " + cudnn_release(cudnn);
      line.differences.push_back("software: claimed " + line.claimed_software + "; here " + here);
    }
    lines.push_back(std::move(line));
  });
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
