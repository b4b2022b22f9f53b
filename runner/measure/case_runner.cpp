// Over 600 lines, kept whole: one case's whole life (inputs, warm-up, profile, samples,
// graph replays, energy, counters, the float64 checks and their bounds) shares one Impl's
// state, which a split would hand between files. Which cases share inputs is decided
// elsewhere (same_inputs, runner/plan/case_axes.hpp); the float64 checks are the piece to
// move out next when this file grows (tests/rules/file_size_test.sh holds the list).
#include "runner/measure/case_runner.hpp"

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContextLight.h>
#include <c10/core/DeviceGuard.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/util/Exception.h>
#include <torch/csrc/autograd/grad_mode.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <stdexcept>

#include "runner/common/elapsed.hpp"
#include "runner/common/interrupt.hpp"
#include "runner/common/text.hpp"
#include "runner/device/device.hpp"
#include "runner/device/environment.hpp"
#include "runner/device/gpu_sharing.hpp"
#include "runner/device/nvml.hpp"
#include "runner/device/torch_device.hpp"
#include "runner/measure/accuracy.hpp"
#include "runner/measure/consistent_profile.hpp"
#include "runner/measure/counter_pass.hpp"
#include "runner/measure/deterministic_algorithms.hpp"
#include "runner/measure/device_copy.hpp"
#include "runner/measure/energy_window.hpp"
#include "runner/measure/failed_result.hpp"
#include "runner/measure/gradient_check.hpp"
#include "runner/measure/graph_timing.hpp"
#include "runner/measure/input_guard.hpp"
#include "runner/measure/inputs.hpp"
#include "runner/measure/output_check.hpp"
#include "runner/measure/sampling.hpp"
#include "runner/measure/timed_pass.hpp"
#include "runner/measure/timer.hpp"
#include "runner/measure/validity.hpp"
#include "runner/plan/case_axes.hpp"
#include "runner/plan/cost.hpp"
#include "runner/variants/fp8_inputs.hpp"
#include "runner/variants/registry.hpp"
#include "runner/variants/variant_names.hpp"

namespace attnsweep {
namespace {

using Clock = std::chrono::steady_clock;

// A variant's output that is not what its inputs call for: the case is an error.
struct WrongOutput : std::runtime_error {
  using std::runtime_error::runtime_error;
};

bool contains(const std::string& text, const char* fragment) { return text.find(fragment) != std::string::npos; }


// A test-only knob: ATTNSWEEP_TEST_SLOWDOWN=<variant>[:<times>][,...] makes each
// warm-up, timed and profiled forward of those variants run <times> times
// (default 2: twice the kernels, about twice the time), so that the nightly
// proof can plant a real regression (docs/reproducibility.md). With
// <variant>:spin=<cycles> (CUDA only; nothing on the CPU) each call is followed
// by one spin kernel of that many GPU cycles instead: the same kernel count on
// every night that sets it (spin=0 on the identical nights), so a slowdown of
// the time alone can be planted (the H200's window figures). It is stored with
// the run among runs.env_vars. Neither for every other variant.
TestSlowdown slowdown_for_tests(const std::string& variant) {
  TestSlowdown slowdown;
  const char* value = std::getenv("ATTNSWEEP_TEST_SLOWDOWN");
  if (!value) return slowdown;
  std::string list = value;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t end = std::min(list.find(',', start), list.size());
    const std::string item = list.substr(start, end - start);
    const std::size_t colon = item.find(':');
    if (item.substr(0, colon) == variant) {
      const std::string how = colon == std::string::npos ? "" : item.substr(colon + 1);
      if (how.rfind("spin=", 0) == 0) {
        slowdown.spin_cycles = std::max(0LL, std::atoll(how.c_str() + 5));
      } else {
        slowdown.repeats = std::max(how.empty() ? 2 : std::atoi(how.c_str()), 1);
      }
      return slowdown;
    }
    start = end + 1;
  }
  return slowdown;
}

// Adds the wall time since the previous call to one phase (phases run one after another).
class PhaseClock {
 public:
  void end(double& phase) {
    const auto now = Clock::now();
    phase += std::chrono::duration<double>(now - start_).count();
    start_ = now;
  }

 private:
  Clock::time_point start_ = Clock::now();
};

}  // namespace

// The order of one case: inputs and support check, accuracy (and for a
// backward pass the gradients), warm-up, eager timing, graph timing, profiling,
// peak memory. Each step is its own file; what a sample of each pass runs is
// timed_pass.hpp.
struct CaseRunner::Impl {
  Device device;
  std::string gpu_uuid;  // read at the first case
  MeasureSettings settings;
  std::uint64_t seed;
  std::unique_ptr<Timer> timer;
  AccuracyCheck accuracy;
  AccuracyCheck unmodified;  // against the attention without the case's score modifications
  AccuracyCheck dequantized_accuracy;  // an fp8 case's: against the dequantised inputs
  GradientCheck gradients;
  ConsistentProfiler profiler;
  // The inputs of the last case: the plan runs all variants of a shape and dtype
  // back to back, and on the CPU device drawing large inputs anew for each would
  // cost up to a second per case (on a GPU the draw is cheap).
  std::optional<Case> inputs_of;  // the case they were drawn for (same_inputs, case_axes.hpp)
  std::optional<AttentionInputs> inputs_cache;
  InputGuard inputs_guard;  // what the shared inputs held when drawn
  // For the backward passes of those inputs: the same tensors as leaves that
  // require grad, and the seeded upstream gradient; made at the first such case.
  std::optional<AttentionInputs> leaves;
  at::Tensor grad_output;
  double run_cooldown_left_s;  // burst: what is left of this process's cool-down allowance
  // Another process was seen computing on the GPU (issue 38): the burst regime's
  // cool-downs wait for the clocks and caps of a GPU that process keeps busy, so
  // they stop for the rest of the run (held out: a 7 s night took 245 s waiting).
  bool contended = false;
  std::optional<nvml::Device> energy_counter;  // the GPU's, found at the first energy window
  CounterPass counter_pass;  // measure.counters: set up at the first case that runs it

  Impl(const Device& device_in, MeasureSettings settings_in, std::uint64_t seed_in)
      : device(device_in),
        settings(settings_in),
        seed(seed_in),
        timer(make_timer(device_in, settings_in.l2_flush, settings_in.hide_launch_latency)),
        accuracy(device_in),
        unmodified(device_in),
        dequantized_accuracy(device_in),
        gradients(device_in),
        profiler(device_in),
        run_cooldown_left_s(settings_in.burst_cooldown_run_max_s),
        counter_pass(device_in, settings_in.counters) {}

  const AttentionInputs& inputs_for(const Case& c) {
    // The reference kept with the inputs is the mask's and the score modification's too;
    // not determinism's (the references run with it off): a deterministic twin shares them.
    if (!inputs_cache || !inputs_of || !same_inputs(*inputs_of, c)) {
      drop_inputs();  // free the old inputs before drawing new ones
      inputs_cache = make_inputs(c, device, seed);
      inputs_guard = InputGuard(*inputs_cache);
      inputs_of = c;
    }
    return *inputs_cache;
  }

  void drop_inputs() {
    accuracy.forget();
    unmodified.forget();
    dequantized_accuracy.forget();
    gradients.forget();
    leaves.reset();
    grad_output = at::Tensor();
    inputs_cache.reset();
    inputs_of.reset();
  }

  // Which of q, k, v differ from what was drawn; empty when unchanged or none
  // are held. Never throws: a failed check (a dead context) counts as changed.
  std::string inputs_changed() {
    if (!inputs_cache) return "";
    try {
      return inputs_guard.changed(*inputs_cache);
    } catch (const c10::Error& error) {
      return "unknown: they could not be read back: " + text::first_line(error.what_without_backtrace());
    } catch (const std::exception& error) {
      return "unknown: they could not be read back: " + text::first_line(error.what());
    }
  }

  void reset_memory_statistics() {
    if (!device.is_cuda()) return;
    synchronize_device(device);
    // cuBLAS keeps one workspace (32 MiB on an H200) per handle and stream, in
    // the caching allocator, for the life of the process: one per CUDA-graph
    // capture stream and one for the autograd thread. Left, they carried into
    // later cases' peaks (sdpa_math's backward read 32 and 96 MiB higher after
    // cases with graphs than without); cleared, a case's peak holds the
    // workspaces of its own pass only.
    at::cuda::clearCublasWorkspaces();
    c10::cuda::CUDACachingAllocator::emptyCache();
    c10::cuda::CUDACachingAllocator::resetPeakStats(static_cast<c10::DeviceIndex>(device.cuda_index()));
  }

  std::optional<std::int64_t> peak_memory_bytes() const {
    if (!device.is_cuda()) return std::nullopt;
    const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(static_cast<c10::DeviceIndex>(device.cuda_index()));
    return stats.allocated_bytes[static_cast<std::size_t>(c10::CachingAllocator::StatType::AGGREGATE)].peak;
  }

  // The case's forward output, checked before anything is timed: it must be
  // what the inputs call for, then its error against float64 gives the verdict.
  // Returns whether the numerics were checked (off, or a reference that did not fit: not).
  bool check_output(const Case& c, const at::Tensor& output, const AttentionInputs& inputs, CaseResult& result) {
    const at::NoGradGuard no_grad;  // a backward's output carries a graph; its check must not extend it
    const std::string mismatch = output_mismatch(output, inputs);
    if (!mismatch.empty()) throw WrongOutput(c.variant + ": " + mismatch);
    if (!settings.accuracy_check) return false;
    if (!reference_in_time(c, result)) return false;
    double error = 0;
    // An fp8 case's stored error is against the bf16 draw before quantisation:
    // the quantisation's error and the kernel's together (issue 36).
    const AttentionInputs reference_inputs = unquantized(inputs);
    if (!reference_fits([&] { error = accuracy.relative_error(output, reference_inputs); }, result)) return false;
    std::optional<double> finite_error;
    if (std::isfinite(error)) {
      finite_error = error;
    } else {
      result.warnings.push_back("output is not finite (NaN or Inf); rel_error left empty");
    }
    result.rel_error = finite_error;
    result.numerics = judge_numerics(finite_error, c.dtype);
    result.numerics_bound = numerics_bound(c.dtype);
    if (inputs.quantized) check_dequantized(output, inputs, result);
    if (result.numerics == NumericsVerdict::ok && c.scores.any()) {
      warn_if_modification_unseen(c, output, reference_inputs, result);
    }
    return true;
  }

  // An fp8 case's second error: against float64 of the dequantised inputs (fp8
  // value x descale, rounded once to float32: 6e-8, far below any fp8 kernel's
  // error), the kernel's own without the quantisation's.
  void check_dequantized(const at::Tensor& output, const AttentionInputs& inputs, CaseResult& result) {
    double error = 0;
    if (!reference_fits([&] { error = dequantized_accuracy.relative_error(output, dequantized(inputs, at::kFloat)); },
                        result)) {
      return;
    }
    if (std::isfinite(error)) result.rel_error_dequantized = error;
  }

  // Whether the check could tell that the case's score modification was
  // applied: where the output is also within the bound of the attention without
  // it (a cap far above the scores, one sink among thousands of keys), a variant
  // that ignored the modification would pass too. The case says so.
  void warn_if_modification_unseen(const Case& c, const at::Tensor& output, const AttentionInputs& inputs,
                                   CaseResult& result) {
    AttentionInputs plain = inputs;
    plain.scores = ScoreMod{};
    plain.alibi_slopes = plain.key_distance = plain.alibi_bias = plain.sinks = at::Tensor();
    double error = 0;
    try {
      error = unmodified.relative_error(output, plain);
    } catch (const c10::OutOfMemoryError&) {
      if (device.is_cuda()) c10::cuda::CUDACachingAllocator::emptyCache();
      result.warnings.push_back("whether the numerics could see " + c.scores.label() +
                                " was not checked: the float64 reference without it did not fit in memory");
      return;
    }
    if (!(error <= numerics_bound(c.dtype))) return;
    char numbers[96];
    std::snprintf(numbers, sizeof numbers, "(%.1e) of the attention without it (rel_error %.2e)", numerics_bound(c.dtype),
                  error);
    result.warnings.push_back("numerics cannot tell that " + c.scores.label() + " was applied: the output is also within " +
                              std::string(to_string(c.dtype)) + "'s bound " + numbers +
                              "; a variant that ignored it would pass");
  }

  // Whether the case's float64 check (its forward's, and a backward's gradients)
  // is expected to end within reference_limit_ns on this device (cost.hpp). One
  // that is not is not computed: the kernel's time is still a fact, its numerics
  // stay empty and the case says why (issue 55, item 11: a CPU case of
  // 1x1x262144x1 spent over 10 minutes in its reference). The estimate is the
  // model's, not a clock's, so a config gets the same answer on every run.
  bool reference_in_time(const Case& c, CaseResult& result) const {
    const std::int64_t expected_ns = expected_reference_check_ns(c.shape, c.pass, device.is_cuda());
    const std::int64_t limit_ns = reference_limit_ns(settings);
    if (expected_ns <= limit_ns) return true;
    char text[256];
    std::snprintf(text, sizeof text,
                  "numerics not checked: the float64 reference would take about %.1f s on %s (%lldx%lldx%lldx%lld "
                  "float64 scores; limit %g s: %d x measure.max_case_seconds)",
                  static_cast<double>(expected_ns) / 1e9, device.to_string().c_str(),
                  static_cast<long long>(c.shape.batch), static_cast<long long>(c.shape.heads),
                  static_cast<long long>(c.shape.seq_len_q), static_cast<long long>(c.shape.seq_len_kv),
                  static_cast<double>(limit_ns) / 1e9, kReferenceLimitCaseSeconds);
    result.warnings.push_back(text);
    return false;
  }

  // Runs a float64 reference check. Where even its smallest chunks do not fit
  // beside the case's tensors, the case is still measured: the kernel ran, so
  // its time is a fact; only its numerics are not checked, and the case says
  // why (issue 33, item 1: the check must never turn a case the kernel can run
  // into `oom`).
  bool reference_fits(const std::function<void()>& check, CaseResult& result) {
    try {
      check();
      return true;
    } catch (const c10::OutOfMemoryError& error) {
      if (device.is_cuda()) c10::cuda::CUDACachingAllocator::emptyCache();
      result.warnings.push_back("numerics not checked: the float64 reference did not fit in memory (" +
                                text::first_line(error.what_without_backtrace()) + ")");
      return false;
    }
  }

  // dq, dk and dv of the pass's first backward against float64 autograd. The
  // verdict is the worst of the forward's and the three gradients' errors.
  // `forward_checked`: check_output's answer. Where the forward's reference did
  // not fit, the gradients' (larger) is not tried: the pass has no verdict, and
  // an unchecked output is not taken for a non-finite one.
  void check_gradients(const Case& c, const TimedPass& pass, const AttentionInputs& leaves, bool forward_checked,
                       CaseResult& result) {
    const std::array<at::Tensor, 3> grads = pass.padded_grads();  // a packed backward's rows in the padded layout
    const at::Tensor* inputs[] = {&leaves.query, &leaves.key, &leaves.value};
    const char* names[] = {"dq", "dk", "dv"};
    for (std::size_t i = 0; i < 3; ++i) {
      if (!grads[i].defined() || grads[i].sizes() != inputs[i]->sizes() ||
          grads[i].scalar_type() != inputs[i]->scalar_type() || grads[i].device() != inputs[i]->device()) {
        throw WrongOutput(c.variant + ": the backward's " + names[i] + " is not shaped like its input");
      }
    }
    if (!settings.accuracy_check || !forward_checked) return;
    const at::NoGradGuard no_grad;
    GradientErrors errors;
    if (!reference_fits([&] { errors = gradients.relative_errors(grads, leaves, grad_output); }, result)) {
      result.numerics.reset();  // the forward's rel_error stays; the pass has no verdict without its gradients
      result.numerics_bound.reset();
      return;
    }
    std::optional<double> worst = result.rel_error;  // empty when the output was not finite
    bool finite = result.rel_error.has_value();
    const auto keep = [&](double error, std::optional<double>& stored, const char* name) {
      if (!std::isfinite(error)) {
        finite = false;
        result.warnings.push_back(std::string(name) + " is not finite (NaN or Inf); grad_rel_error_" + name[1] +
                                  " left empty");
        return;
      }
      stored = error;
      if (worst) worst = std::max(*worst, error);
    };
    keep(errors.query, result.grad_rel_error_q, "dq");
    keep(errors.key, result.grad_rel_error_k, "dk");
    keep(errors.value, result.grad_rel_error_v, "dv");
    result.numerics = judge_numerics(finite ? worst : std::nullopt, c.dtype);
  }

  // The energy window (energy_window.hpp, docs/measurement.md "Energy") after the
  // eager samples: in the burst regime from a GPU cooled down as before every
  // sample, in the sustained one right after them. A backward needs an untimed
  // forward before every pass, whose energy the counter cannot tell apart: none.
  void measure_energy(const Case& c, const TimedPass& pass, const SamplingSettings& sampling, CaseResult& result) {
    if (c.pass == Pass::backward) return;
    if (!energy_counter) energy_counter = nvml::Device::of_cuda_device(device.cuda_index());
    if (sampling.regime == MeasureRegime::burst) {
      result.cooldown_seconds += cool_down_within_budget(*timer, sampling, result);
    }
    EnergyWindowSettings window;
    window.window_s = settings.energy_window_ms / 1000.0;
    const nvml::Device& counter = *energy_counter;
    const EnergyWindowOutcome outcome =
        measure_energy_window({[&counter] { return counter.total_energy_mj(); }, pass.call,
                               [this] { synchronize_device(device); }},
                              window);
    if (!outcome.measurement) {
      result.warnings.push_back("energy not measured: " + outcome.why_not);
      return;
    }
    const EnergyMeasurement& measured = *outcome.measurement;
    result.energy_j = measured.joules_per_pass;
    result.energy_power_w = measured.power_w;
    result.energy_window_s = measured.window_s;
    result.energy_passes = measured.passes;
  }

  void measure(const Case& c, const Variant& variant, const std::string& trace_path, CaseResult& result) {
    PhaseClock clock;
    const AttentionInputs& shared_inputs = inputs_for(c);
    const bool differentiating = c.pass != Pass::forward;
    if (differentiating) {
      if (c.shape.forward_only()) {
        result.status = CaseStatus::unsupported;
        result.error_message = "paged KV caches are measured forward only (serving); their backward is not timed";
        return;
      }
      if (is_fp8(c.dtype)) {
        result.status = CaseStatus::unsupported;
        result.error_message = "fp8 cases are measured forward only (FlashAttention-3's fp8 path is a forward; "
                               "naive's emulation is of the forward)";
        return;
      }
      if (const std::string refusal = variant.backward_refusal(shared_inputs); !refusal.empty()) {
        result.status = CaseStatus::unsupported;
        result.error_message = refusal;
        return;
      }
      if (!leaves) leaves = as_leaves(shared_inputs);
      if (!grad_output.defined()) {
        // Kept outside the caching allocator (as the float64 references are), so
        // that the forward cases of these inputs run after a backward case do not
        // carry it in their peak_mem_bytes; where there is no room, in the allocator.
        grad_output = make_grad_output(c, device, seed);
        if (auto outside = copy_outside_caching_allocator(grad_output, device.is_cuda())) grad_output = *outside;
      }
    }
    const AttentionInputs& inputs = differentiating ? *leaves : shared_inputs;
    {
      // Backends are chosen with grad in mind (PyTorch's checks look at
      // requires_grad), so a backward pass asks with grad mode on; an op
      // library's laid-out copies are then made on the path back to the leaves.
      const at::AutoGradMode grad_mode(differentiating);
      const Support support = variant.check(inputs);
      clock.end(result.phases.setup);
      if (!support.supported) {
        result.status = CaseStatus::unsupported;
        result.error_message = support.reason;
        return;
      }
      result.sdpa_backend = variant.sdpa_backend(inputs);
    }

    TestSlowdown slowdown = slowdown_for_tests(c.variant);
    if (!device.is_cuda()) slowdown.spin_cycles.reset();
    TimedPass pass(c.pass, variant, inputs, grad_output, slowdown);
    // The eager results, kept (outside the caching allocator, so not in
    // peak_mem_bytes) for the check of the graph replays' output.
    const bool graphs = device.is_cuda() && settings.cuda_graph;
    std::vector<at::Tensor> eager_results;
    if (!differentiating) {
      // Scoped: the output is freed before the peak-memory count starts.
      const at::Tensor first_output = variant.forward(inputs);
      check_output(c, first_output, inputs, result);
      if (graphs) eager_results = kept_copies({first_output});
    } else {
      if (pass.before) pass.before();
      pass.call();
      const bool forward_checked = check_output(c, pass.output(), inputs, result);
      result.sdpa_backend_backward = variant.sdpa_backend_backward(pass.output());
      check_gradients(c, pass, inputs, forward_checked, result);
      if (graphs) eager_results = kept_copies(pass.results());
      pass.release();  // freed before the peak-memory count starts
    }
    reset_memory_statistics();
    clock.end(result.phases.accuracy);

    for (int i = 0; i < settings.warmup; ++i) {
      if (interrupt_requested()) throw Interrupted{};
      if (pass.before) pass.before();
      pass.call();
    }
    synchronize_device(device);
    clock.end(result.phases.warmup);

    CooldownBudget cooldown{settings.burst_cooldown_case_max_s, &run_cooldown_left_s};
    SamplingSettings sampling = SamplingSettings::from(settings);
    sampling.cooldown_budget = &cooldown;
    if (contended) sampling.regime = MeasureRegime::sustained;  // no cool-downs on a shared GPU (`contended`)
    time_eager(*timer, pass.call, sampling, device.is_cuda(), settings.hide_launch_latency, result, pass.before);
    if (device.is_cuda() && settings.energy_window_ms > 0) measure_energy(c, pass, sampling, result);
    clock.end(result.phases.timing);  // the energy window included
    // The pass's peak: over its warm-up and eager samples. The graph's capture and
    // its pool, alive until its replays are profiled, are no memory of the pass (the
    // H200 read sdpa_math's peak 33 to 168 MiB higher with graphs than without when
    // it was read after the profile phase); the profile phase runs the same passes.
    result.peak_mem_bytes = peak_memory_bytes();
    std::optional<CapturedGraph> graph;
    std::vector<at::Tensor> graph_results;
    if (graphs) {
      // The capture warms up on a stream of its own, and the caching allocator
      // keeps blocks per stream: without these two empties the eager samples'
      // cached blocks starve the capture, and the capture's warm-up blocks
      // starve the profile phase's eager passes (on the H200, sdpa_math of
      // 8x64/8x4x65536x128 ran out of memory with 64 GiB reserved but unused).
      c10::cuda::CUDACachingAllocator::emptyCache();
      graph = time_graph(*timer, pass.captured, [&] { return pass.results(); }, sampling, result, pass.before_capture);
      c10::cuda::CUDACachingAllocator::emptyCache();
      if (graph) {
        // The replays' output right after the timed replays, copied outside the
        // caching allocator; the graph's own tensors are let go, so that they
        // are not in the profile phase's peak_mem_bytes (the replays still
        // write that memory, which stays the graph's private pool's).
        graph_results = kept_copies(graph->outputs);
        graph->outputs.clear();
      }
    }
    clock.end(result.phases.graph);
    result.cooldown_budget_exhausted = cooldown.exhausted;
    std::function<void()> replay;
    if (graph) replay = [&] { graph->replay(); };
    profiler.profile(pass.call, settings.profiled_forwards, settings.max_profile_attempts, trace_path, result,
                     pass.before, replay);
    clock.end(result.phases.profile);
    measure_counters(pass, result);
    // After the peak was read: the float64 difference allocates.
    if (!graph_results.empty() && !eager_results.empty()) {
      result.graph_output_rel_diff = graph_output_difference(graph_results, eager_results);
    }
  }

  // The counter pass (counter_pass.hpp), after every timed and profiled pass. A
  // failure of its own is the counters' reason, not the case's: the times stand.
  void measure_counters(TimedPass& pass, CaseResult& result) {
    if (!counter_pass.asked()) return;
    try {
      counter_pass.measure(pass.before, pass.call, result);
    } catch (const Interrupted&) {
      throw;
    } catch (const c10::Error& error) {
      result.counters_why_not = "the counter pass failed: " + text::first_line(error.what_without_backtrace());
    } catch (const std::exception& error) {
      result.counters_why_not = "the counter pass failed: " + text::first_line(error.what());
    } catch (...) {
      result.counters_why_not = "the counter pass failed: an exception that is no std::exception";
    }
  }

  // Copies of a pass's results outside the caching allocator; empty when any
  // does not fit (the graph's output is then not checked).
  std::vector<at::Tensor> kept_copies(const std::vector<at::Tensor>& tensors) const {
    std::vector<at::Tensor> copies;
    for (const at::Tensor& tensor : tensors) {
      if (!tensor.defined()) return {};
      auto copy = copy_outside_caching_allocator(tensor.detach(), device.is_cuda());
      if (!copy) return {};
      copies.push_back(*copy);
    }
    return copies;
  }

  // After a failure: is the CUDA context still usable? Errors such as a
  // device-side assert are sticky: every later call would fail. Found out once, here.
  // Empty when usable, else the context's own error ("device-side assert
  // triggered"): the call that failed first may only have seen its effect (a
  // cuBLAS call reporting CUBLAS_STATUS_INTERNAL_ERROR on the poisoned context).
  std::optional<std::string> device_unusable_because() {
    if (!device.is_cuda()) return std::nullopt;
    try {
      synchronize_device(device);
      c10::cuda::CUDACachingAllocator::emptyCache();
      return std::nullopt;
    } catch (const c10::Error& error) {
      return text::first_line(error.what_without_backtrace());
    } catch (const std::exception& error) {
      return text::first_line(error.what());
    }
  }
};

CaseRunner::CaseRunner(const Device& device, MeasureSettings settings, std::uint64_t seed)
    : impl_(std::make_unique<Impl>(device, settings, seed)) {}

CaseRunner::~CaseRunner() = default;

void CaseRunner::stop_cooling_down() { impl_->contended = true; }

CaseResult CaseRunner::run(const Case& c, const std::string& trace_path) {
  const GpuSharing before = read_gpu_sharing(impl_->device);
  const bool cooling = impl_->settings.regime == MeasureRegime::burst && !impl_->contended;
  if (before.other_processes.value_or(0) > 0) stop_cooling_down();
  CaseResult result = measure_case(c, trace_path);
  if (cooling && impl_->contended) {
    result.warnings.push_back("another process computes on this GPU: the burst regime's cool-downs stop for the rest "
                              "of the run (they would wait on that process's load; the cases are marked shared_gpu "
                              "and not judged)");
  }
  if (!result.device_unusable) {
    const GpuSharing after = read_gpu_sharing(impl_->device);
    if (before.other_processes || after.other_processes) {
      result.other_processes = std::max(before.other_processes.value_or(0), after.other_processes.value_or(0));
    }
    if (result.other_processes.value_or(0) > 0) {
      stop_cooling_down();
      result.warnings.push_back(std::to_string(*result.other_processes) +
                                " other process(es) computed on this GPU during the case (NVML): its times are "
                                "not the GPU's alone, and compare and nightly do not judge them");
    }
  }
  if (impl_->device.is_cuda()) {
    if (impl_->gpu_uuid.empty()) impl_->gpu_uuid = gpu_uuid(impl_->device);
    result.gpu_uuid = impl_->gpu_uuid;
  }
  judge_validity(c, ValidityLimits::from(impl_->settings), result);
  return result;
}

CaseResult CaseRunner::measure_case(const Case& c, const std::string& trace_path) {
  const auto start = Clock::now();
  const Device& device = impl_->device;
  const VariantInfo* info = find_variant_info(c.variant);
  const Variant* variant = find_variant(c.variant);
  if (!info || !variant) return failed_result(c, device, CaseStatus::error, "unknown variant '" + c.variant + "'");
  if (!device.is_cuda() && !info->runs_on_cpu) {
    return failed_result(c, device, CaseStatus::unsupported,
                         c.variant + " has no CPU implementation in PyTorch (CPU SDPA backends: flash, math)");
  }
  CaseResult result = started_result(c, device);
  c10::OptionalDeviceGuard device_guard;
  if (device.is_cuda()) device_guard.reset_device(torch_device(device));
  at::NoGradGuard no_grad;
  std::optional<std::pair<CaseStatus, std::string>> failure;
  try {
    const DeterministicAlgorithms algorithms(c.deterministic);
    impl_->measure(c, *variant, trace_path, result);
    if (result.status != CaseStatus::ok) failure.emplace(result.status, result.error_message);
  } catch (const c10::OutOfMemoryError& error) {
    failure.emplace(CaseStatus::oom, error.what_without_backtrace());
  } catch (const c10::Error& error) {
    const std::string message = error.what_without_backtrace();
    // A backend PyTorch refuses at run time is unsupported, not an error; so is
    // an operation without a deterministic path in a deterministic case.
    const bool refused = contains(message, "No available kernel") || contains(message, "Invalid backend") ||
                         (c.deterministic && refused_for_determinism(message));
    failure.emplace(refused ? CaseStatus::unsupported : CaseStatus::error, message);
  } catch (const std::exception& error) {
    failure.emplace(CaseStatus::error, error.what());
  } catch (const Interrupted&) {
    (void)variant->end_case();
    throw;  // a stop request, not a failure: the sweep handles it
  } catch (...) {
    // Op libraries are other people's code: `throw 42` must cost a case, not the sweep.
    failure.emplace(CaseStatus::error, c.variant + " threw a C++ exception that is not a std::exception");
  }
  const std::string own_copies_changed = variant->end_case();
  if (!own_copies_changed.empty() && (!failure || failure->first == CaseStatus::unsupported)) {
    failure.emplace(CaseStatus::error, c.variant + " wrote into its inputs (its laid-out " + own_copies_changed +
                                           " changed): its results are not those of the case's inputs");
  }
  // The inputs are shared with the next variants of this shape and dtype: one
  // that wrote into them is an error, and the next case draws them anew.
  // (A case that failed otherwise drops its inputs below anyway.)
  if (!failure || failure->first == CaseStatus::unsupported) {
    if (const std::string changed = impl_->inputs_changed(); !changed.empty()) {
      failure.emplace(CaseStatus::error, c.variant + " wrote into its inputs (" + changed +
                                             " changed): its results are not those of the case's inputs");
    }
  }
  if (failure) {
    const auto [status, message] = *failure;
    result = failed_result(c, device, status, message, result.phases);  // where the time went is still true
    // A case that failed while running may have left the inputs in a bad state;
    // an unsupported one never touched them (and redrawing cost up to a second).
    if (status != CaseStatus::unsupported) impl_->drop_inputs();
    if (const auto sticky = impl_->device_unusable_because()) {
      result.device_unusable = true;
      if (result.error_message.find(*sticky) == std::string::npos) {
        result.error_message += " (the CUDA context then reported: " + *sticky + ")";
      }
    }
  }
  result.wall_seconds = seconds_since(start);
  return result;
}

}  // namespace attnsweep
