#include "runner/common/identities.hpp"

#include <cstddef>

#include "runner/common/errors.hpp"

namespace attnsweep {
namespace {

// One list of spellings per enum, in declaration order: the value's index is its position.
const std::vector<std::string>& names_of(CaseStatus) {
  static const std::vector<std::string> names = {"ok", "unsupported", "oom", "error", "crashed", "timeout"};
  return names;
}
const std::vector<std::string>& names_of(RunStatus) {
  static const std::vector<std::string> names = {"running", "done", "interrupted", "failed", "incomplete"};
  return names;
}
const std::vector<std::string>& names_of(Dtype) {
  static const std::vector<std::string> names = {"bf16", "fp16", "fp32", "fp8_e4m3", "fp8_e5m2"};
  return names;
}
const std::vector<std::string>& names_of(SampleMode) {
  static const std::vector<std::string> names = {"eager", "graph"};
  return names;
}
const std::vector<std::string>& names_of(CaseOrder) {
  static const std::vector<std::string> names = {"plan", "shuffled"};
  return names;
}
const std::vector<std::string>& names_of(MeasureRegime) {
  static const std::vector<std::string> names = {"sustained", "burst"};
  return names;
}
const std::vector<std::string>& names_of(Pass) {
  static const std::vector<std::string> names = {"forward", "backward", "forward_backward"};
  return names;
}

template <typename Enum>
const char* name(Enum value) {
  return names_of(Enum{}).at(static_cast<std::size_t>(value)).c_str();
}

template <typename Enum>
std::optional<Enum> parse(const std::string& text) {
  const auto& names = names_of(Enum{});
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] == text) return static_cast<Enum>(i);
  }
  return std::nullopt;
}

}  // namespace

std::optional<Device> Device::try_parse(const std::string& text) {
  if (text == "auto") return Device::automatic();
  if (text == "cpu") return Device::cpu();
  if (text == "cuda") return Device::cuda();
  const std::string prefix = "cuda:";
  // Up to four digits: no machine has more GPUs, and stoi cannot overflow.
  if (text.rfind(prefix, 0) != 0 || text.size() <= prefix.size() || text.size() > prefix.size() + 4) return std::nullopt;
  if (text.find_first_not_of("0123456789", prefix.size()) != std::string::npos) return std::nullopt;
  return Device::cuda(std::stoi(text.substr(prefix.size())));
}

Device Device::parse(const std::string& text) {
  if (auto device = try_parse(text)) return *device;
  throw BadInputError("unknown device '" + text + "'; allowed: " + kDeviceNamesAllowed);
}

std::string Device::to_string() const {
  switch (kind_) {
    case DeviceKind::automatic: return "auto";
    case DeviceKind::cpu: return "cpu";
    case DeviceKind::cuda: return index_ < 0 ? "cuda" : "cuda:" + std::to_string(index_);
  }
  return "auto";
}

const char* to_string(CaseStatus status) { return name(status); }
const char* to_string(RunStatus status) { return name(status); }
const char* to_string(Dtype dtype) { return name(dtype); }
const char* to_string(SampleMode mode) { return name(mode); }
const char* to_string(CaseOrder order) { return name(order); }
const char* to_string(MeasureRegime regime) { return name(regime); }
const char* to_string(Pass pass) { return name(pass); }

std::optional<CaseStatus> parse_case_status(const std::string& text) { return parse<CaseStatus>(text); }
std::optional<RunStatus> parse_run_status(const std::string& text) { return parse<RunStatus>(text); }
std::optional<Dtype> parse_dtype(const std::string& text) { return parse<Dtype>(text); }
std::optional<SampleMode> parse_sample_mode(const std::string& text) { return parse<SampleMode>(text); }
std::optional<CaseOrder> parse_case_order(const std::string& text) { return parse<CaseOrder>(text); }
std::optional<MeasureRegime> parse_measure_regime(const std::string& text) { return parse<MeasureRegime>(text); }
std::optional<Pass> parse_pass(const std::string& text) { return parse<Pass>(text); }

const std::vector<std::string>& case_status_names() { return names_of(CaseStatus{}); }
const std::vector<std::string>& run_status_names() { return names_of(RunStatus{}); }
const std::vector<std::string>& dtype_names() { return names_of(Dtype{}); }
const std::vector<std::string>& case_order_names() { return names_of(CaseOrder{}); }
const std::vector<std::string>& measure_regime_names() { return names_of(MeasureRegime{}); }
const std::vector<std::string>& sample_mode_names() { return names_of(SampleMode{}); }
const std::vector<std::string>& pass_names() { return names_of(Pass{}); }

int dtype_bytes(Dtype dtype) {
  if (is_fp8(dtype)) return 1;
  return dtype == Dtype::fp32 ? 4 : 2;
}

bool is_fp8(Dtype dtype) { return dtype == Dtype::fp8_e4m3 || dtype == Dtype::fp8_e5m2; }

Dtype output_dtype(Dtype dtype) { return is_fp8(dtype) ? Dtype::bf16 : dtype; }

std::ostream& operator<<(std::ostream& out, const Device& device) { return out << device.to_string(); }
std::ostream& operator<<(std::ostream& out, CaseStatus status) { return out << to_string(status); }
std::ostream& operator<<(std::ostream& out, RunStatus status) { return out << to_string(status); }
std::ostream& operator<<(std::ostream& out, Dtype dtype) { return out << to_string(dtype); }
std::ostream& operator<<(std::ostream& out, SampleMode mode) { return out << to_string(mode); }
std::ostream& operator<<(std::ostream& out, CaseOrder order) { return out << to_string(order); }
std::ostream& operator<<(std::ostream& out, MeasureRegime regime) { return out << to_string(regime); }
std::ostream& operator<<(std::ostream& out, Pass pass) { return out << to_string(pass); }

}  // namespace attnsweep
