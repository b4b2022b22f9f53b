#include "runner/cli/summary_table.hpp"

#include <iomanip>
#include <sstream>

#include "runner/common/text.hpp"

namespace attnsweep {
namespace {

std::string count_or_dash(const CaseResult& r, const std::vector<int> ProfileSummary::*counts) {
  if (!r.profile || r.device.rfind("cuda", 0) != 0) return "-";
  const auto& values = (*r.profile).*counts;
  if (values.empty()) return "-";
  return std::to_string(values.front()) + (r.profile->counts_consistent ? "" : "?");
}

double median_us(const CaseResult& r) {
  if (r.gpu_time_us) return r.gpu_time_us->median;
  if (r.cpu_time_us) return r.cpu_time_us->median;
  return -1;
}

std::string scientific(double value) {
  std::ostringstream out;
  out << std::scientific << std::setprecision(1) << value;
  return out.str();
}

}  // namespace

std::string one_line_result(const Case& c, const CaseResult& r) {
  std::string line = c.label() + ": " + r.status;
  if (r.status != "ok") return line + " (" + r.error_message.substr(0, 200) + ")";
  line += ", median " + text::fixed(median_us(r), 1) + " us";
  if (r.profile && r.device.rfind("cuda", 0) == 0) {
    line += ", " + count_or_dash(r, &ProfileSummary::kernels_each_forward) + " kernels + " +
            count_or_dash(r, &ProfileSummary::memcpy_each_forward) + " memcpy + " +
            count_or_dash(r, &ProfileSummary::memset_each_forward) + " memset per forward";
  }
  if (r.sdpa_backend.size()) line += ", backend " + r.sdpa_backend;
  line += ", " + std::to_string(r.samples.size()) + " samples (" + r.stop_reason + ")";
  return line;
}

void print_summary_table(std::ostream& out, const std::vector<std::pair<Case, CaseResult>>& rows) {
  const char* format = "%-15s %-20s %-5s %-6s %-11s %7s %6s %6s %11s %8s %9s\n";
  char line[512];
  std::snprintf(line, sizeof line, format, "variant", "shape", "dtype", "causal", "status", "kernels", "memcpy",
                "memset", "median_us", "TFLOP/s", "rel_err");
  out << line;
  for (const auto& [c, r] : rows) {
    const bool ok = r.status == "ok";
    const std::string median = ok ? text::fixed(median_us(r), 1) : "-";
    const std::string tflops = ok && r.tflops ? text::fixed(*r.tflops, 2) : "-";
    const std::string error = ok && r.rel_error ? scientific(*r.rel_error) : "-";
    std::snprintf(line, sizeof line, format, c.variant.c_str(), c.shape.label().c_str(), c.dtype.c_str(),
                  c.causal ? "yes" : "no", r.status.c_str(),
                  count_or_dash(r, &ProfileSummary::kernels_each_forward).c_str(),
                  count_or_dash(r, &ProfileSummary::memcpy_each_forward).c_str(),
                  count_or_dash(r, &ProfileSummary::memset_each_forward).c_str(), median.c_str(), tflops.c_str(),
                  error.c_str());
    out << line;
  }
}

}  // namespace attnsweep
