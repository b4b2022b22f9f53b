#include "runner/report/case_line.hpp"

#include "runner/common/text.hpp"

namespace attnsweep::report {
namespace {

std::string count_text(const ProfileSummary& profile, const std::vector<int>& counts) {
  if (counts.empty()) return "-";
  return std::to_string(counts.front()) + (profile.counts_consistent ? "" : "?");
}

}  // namespace

std::string one_line_result(const Case& c, const CaseResult& r) {
  std::string line = c.label() + ": " + to_string(r.status);
  if (r.status != CaseStatus::ok) return line + " (" + r.error_message.substr(0, 200) + ")";
  const double median = r.gpu_time_us ? r.gpu_time_us->median : r.cpu_time_us ? r.cpu_time_us->median : -1;
  line += ", median " + text::fixed(median, 1) + " us";
  if (r.profile && r.device.is_cuda()) {
    const ProfileSummary& p = *r.profile;
    line += ", " + count_text(p, p.kernels_each_forward) + " kernels + " + count_text(p, p.memcpy_each_forward) +
            " memcpy + " + count_text(p, p.memset_each_forward) + " memset per forward";
  }
  if (!r.sdpa_backend.empty()) line += ", backend " + r.sdpa_backend;
  const std::string stop_reason = r.stop_reason ? to_string(*r.stop_reason) : "";
  line += ", " + std::to_string(r.samples.size()) + " samples (" + stop_reason + ")";
  return line;
}

}  // namespace attnsweep::report
