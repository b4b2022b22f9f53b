#pragma once
// What one timed sample of a case's pass runs (docs/measurement.md, "Passes"):
//   forward           the variant's forward, under no-grad as always;
//   backward          untimed before the sample, a forward with grad on leaf
//                     inputs that keeps its graph; timed, the backward alone:
//                     torch::autograd::grad of the output with the seeded
//                     upstream gradient (the graph is freed, as in training);
//   forward_backward  both timed: one training step of the layer.
// A variable-length batch's kernels that return packed rows (flash's and the
// memory-efficient kernel's entry points) are differentiated with respect to
// the packed leaves, with the upstream gradient's real rows packed (made once,
// at the untimed first backward); the padded variants with respect to the padded leaves.
// The same calls serve the eager samples, the CUDA-graph capture and the
// profiler, so all three measure the same work.
#include <array>
#include <functional>
#include <optional>
#include <vector>

#include "runner/plan/case.hpp"
#include "runner/variants/variant.hpp"

namespace attnsweep {

// What the test knob ATTNSWEEP_TEST_SLOWDOWN asks of a variant (case_runner.cpp):
// run each call `repeats` times, or follow it with a spin kernel of `spin_cycles`.
struct TestSlowdown {
  int repeats = 1;
  std::optional<long long> spin_cycles;  // CUDA only
};

class TimedPass {
 public:
  // `inputs` are leaves that require grad for the backward passes (as_leaves);
  // `slowdown` is none but under the test knob.
  TimedPass(Pass pass, const Variant& variant, const AttentionInputs& inputs, at::Tensor grad_output,
            TestSlowdown slowdown = {});
  TimedPass(const TimedPass&) = delete;
  TimedPass& operator=(const TimedPass&) = delete;

  // Untimed work before each sample: the backward's forward; empty otherwise.
  std::function<void()> before;
  // The timed work of one sample.
  std::function<void()> call;
  // For a CUDA graph: what runs on the capture stream before the capture (the
  // backward's forward; empty otherwise) and what is captured. A captured
  // backward keeps its autograd graph, since every replay runs it again.
  std::function<void()> before_capture;
  std::function<void()> captured;

  const at::Tensor& output() const { return output_; }                // of the last forward
  const std::array<at::Tensor, 3>& grads() const { return grads_; }  // dq, dk, dv of the last backward
  // The same in the padded (batch, heads, seq, head_dim) layout: a packed
  // backward's rows unpacked, zeros in the padding rows; for the gradients' check.
  std::array<at::Tensor, 3> padded_grads() const;
  // What the pass produces: the forward's output, or dq, dk and dv.
  std::vector<at::Tensor> results() const;
  void release() {
    output_ = at::Tensor();
    grads_ = {};
  }

 private:
  void forward_with_grad();
  void backward(bool keep_graph);
  bool packed_output() const;  // the last forward returned a variable-length batch's packed rows

  const Variant& variant_;
  const AttentionInputs& inputs_;
  at::Tensor grad_output_;
  at::Tensor packed_grad_output_;  // its real rows packed, made at the first backward of a packed output
  int repeats_;
  std::optional<long long> spin_cycles_;
  at::Tensor output_;
  std::array<at::Tensor, 3> grads_;
};

}  // namespace attnsweep
