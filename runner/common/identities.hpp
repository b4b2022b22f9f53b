#pragma once
// The names attnsweep passes between layers, typed: a device, a case's status,
// a dtype, a sample's mode, a case order and a run's status. Each is parsed and
// printed here and nowhere else, so the config, the store, the printers and the
// tests agree on every spelling. No LibTorch.
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace attnsweep {

// ---- Device: auto, cpu, cuda or cuda:N -------------------------------------
enum class DeviceKind { automatic, cpu, cuda };

class Device {
 public:
  Device() = default;  // auto
  static Device automatic() { return Device(); }
  static Device cpu() { return Device(DeviceKind::cpu, -1); }
  static Device cuda(int index = -1) { return Device(DeviceKind::cuda, index); }

  // "auto", "cpu", "cuda", "cuda:N"; nullopt for anything else.
  static std::optional<Device> try_parse(const std::string& text);
  // As try_parse, but throws BadInputError naming what is allowed.
  static Device parse(const std::string& text);

  DeviceKind kind() const { return kind_; }
  bool is_auto() const { return kind_ == DeviceKind::automatic; }
  bool is_cpu() const { return kind_ == DeviceKind::cpu; }
  bool is_cuda() const { return kind_ == DeviceKind::cuda; }
  // The CUDA ordinal: N for cuda:N, 0 for plain "cuda", -1 when not CUDA.
  int cuda_index() const { return is_cuda() ? (index_ < 0 ? 0 : index_) : -1; }
  // A device a case can run on: cpu or cuda:N (auto and plain cuda are not).
  bool is_resolved() const { return is_cpu() || (is_cuda() && index_ >= 0); }
  std::string to_string() const;

  bool operator==(const Device& other) const { return kind_ == other.kind_ && index_ == other.index_; }
  bool operator!=(const Device& other) const { return !(*this == other); }

 private:
  Device(DeviceKind kind, int index) : kind_(kind), index_(index) {}
  DeviceKind kind_ = DeviceKind::automatic;
  int index_ = -1;  // CUDA only; -1 for "cuda" without an index
};

inline const char* const kDeviceNamesAllowed = "auto, cpu, cuda, cuda:N";

// ---- Enumerations with one spelling each -----------------------------------
// Every enum below has to_string() and parse_<name>() -> optional; the lists of
// names (declaration order) serve messages, and tests hold the schema's CHECK
// constraints to them.

enum class CaseStatus { ok, unsupported, oom, error, crashed, timeout };
// incomplete: a merged run still missing shards or cases of a shard (attnsweep merge).
enum class RunStatus { running, done, interrupted, failed, incomplete };
// fp8_e4m3 and fp8_e5m2 (issue 36): q, k and v quantised per tensor from the
// same seeded bf16 draw, with float32 descales; the output is bf16.
enum class Dtype { bf16, fp16, fp32, fp8_e4m3, fp8_e5m2 };
enum class SampleMode { eager, graph };
enum class CaseOrder { plan, shuffled };
// sustained: samples back to back (a kernel that draws the power cap is measured
// capped); burst: a cool-down before each sample until no power or thermal cap
// is active and the SM clock is back at its maximum (docs/measurement.md).
enum class MeasureRegime { sustained, burst };
// What a case times (issue 23): the forward alone; the backward alone, after an
// untimed forward that keeps its graph; or both, one training step of the layer.
enum class Pass { forward, backward, forward_backward };

const char* to_string(CaseStatus status);
const char* to_string(RunStatus status);
const char* to_string(Dtype dtype);
const char* to_string(SampleMode mode);
const char* to_string(CaseOrder order);
const char* to_string(MeasureRegime regime);
const char* to_string(Pass pass);

std::optional<CaseStatus> parse_case_status(const std::string& text);
std::optional<RunStatus> parse_run_status(const std::string& text);
std::optional<Dtype> parse_dtype(const std::string& text);
std::optional<SampleMode> parse_sample_mode(const std::string& text);
std::optional<CaseOrder> parse_case_order(const std::string& text);
std::optional<MeasureRegime> parse_measure_regime(const std::string& text);
std::optional<Pass> parse_pass(const std::string& text);

const std::vector<std::string>& case_status_names();
const std::vector<std::string>& run_status_names();
const std::vector<std::string>& dtype_names();
const std::vector<std::string>& case_order_names();
const std::vector<std::string>& measure_regime_names();
const std::vector<std::string>& sample_mode_names();
const std::vector<std::string>& pass_names();

// Bytes per element: 2 for bf16 and fp16, 4 for fp32, 1 for fp8.
int dtype_bytes(Dtype dtype);  // of q, k and v: 1 for fp8
bool is_fp8(Dtype dtype);
// The output's dtype: bf16 for an fp8 case (as FlashAttention-3's fp8 forward writes it), else the dtype.
Dtype output_dtype(Dtype dtype);

// For gtest messages and logs.
std::ostream& operator<<(std::ostream& out, const Device& device);
std::ostream& operator<<(std::ostream& out, CaseStatus status);
std::ostream& operator<<(std::ostream& out, RunStatus status);
std::ostream& operator<<(std::ostream& out, Dtype dtype);
std::ostream& operator<<(std::ostream& out, SampleMode mode);
std::ostream& operator<<(std::ostream& out, CaseOrder order);
std::ostream& operator<<(std::ostream& out, MeasureRegime regime);
std::ostream& operator<<(std::ostream& out, Pass pass);

}  // namespace attnsweep
