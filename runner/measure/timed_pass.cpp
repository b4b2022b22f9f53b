#include "runner/measure/timed_pass.hpp"

#include <ATen/ATen.h>
#include <ATen/cuda/Sleep.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/grad_mode.h>

#include "runner/measure/device_copy.hpp"

namespace attnsweep {

TimedPass::TimedPass(Pass pass, const Variant& variant, const AttentionInputs& inputs, at::Tensor grad_output,
                     TestSlowdown slowdown)
    : variant_(variant),
      inputs_(inputs),
      grad_output_(std::move(grad_output)),
      repeats_(slowdown.repeats),
      spin_cycles_(slowdown.spin_cycles) {
  switch (pass) {
    case Pass::forward:
      call = [this] {
        for (int i = 0; i < repeats_; ++i) output_ = variant_.forward(inputs_);
      };
      captured = call;
      break;
    case Pass::backward:
      before = [this] { forward_with_grad(); };
      // Under the test knob the backward runs `repeats` times on one graph: all
      // but the last keep it.
      call = [this] {
        for (int i = 0; i < repeats_; ++i) backward(/*keep_graph=*/i + 1 < repeats_);
      };
      before_capture = before;
      captured = [this] {
        for (int i = 0; i < repeats_; ++i) backward(/*keep_graph=*/true);
      };
      break;
    case Pass::forward_backward:
      call = [this] {
        for (int i = 0; i < repeats_; ++i) {
          forward_with_grad();
          backward(/*keep_graph=*/false);
        }
      };
      captured = call;
      break;
  }
  if (spin_cycles_) {
    // The test knob's spin kernel after every timed call: one more kernel on
    // every night that sets it, more time on the nights that make it long.
    const auto spin = [cycles = *spin_cycles_](const std::function<void()>& work) {
      return [work, cycles] {
        work();
        at::cuda::sleep(cycles);
      };
    };
    call = spin(call);
    captured = spin(captured);
  }
}

std::vector<at::Tensor> TimedPass::results() const {
  if (!grads_[0].defined()) return {output_};
  return {grads_[0], grads_[1], grads_[2]};
}

// The last sample's output and gradients are freed before the next are made,
// so peak_mem_bytes is one training step's: the saved tensors and one set of gradients.
void TimedPass::forward_with_grad() {
  const at::AutoGradMode grad_on(true);
  output_ = at::Tensor();
  grads_ = {};
  output_ = variant_.forward(inputs_);
}

bool TimedPass::packed_output() const { return inputs_.packed && output_.dim() == 3; }

void TimedPass::backward(bool keep_graph) {
  const at::AutoGradMode grad_on(true);
  grads_ = {};
  // grad rather than backward: nothing accumulates into the leaves' .grad, so
  // every sample does the same work and the leaves stay the shared inputs.
  const bool packed = packed_output();
  if (packed && !packed_grad_output_.defined()) {
    // Made at the first backward (the accuracy pass, untimed), for a packed output
    // only, and kept outside the caching allocator as the padded one is: not in peak_mem_bytes.
    const at::Tensor rows = inputs_.packed->pack_query_side(grad_output_);
    packed_grad_output_ = copy_outside_caching_allocator(rows, rows.is_cuda()).value_or(rows);
  }
  const auto grads = torch::autograd::grad(
      {output_}, packed ? std::vector<at::Tensor>{inputs_.packed->query, inputs_.packed->key, inputs_.packed->value}
                        : std::vector<at::Tensor>{inputs_.query, inputs_.key, inputs_.value},
      {packed ? packed_grad_output_ : grad_output_}, /*retain_graph=*/keep_graph);
  grads_ = {grads[0], grads[1], grads[2]};
}

std::array<at::Tensor, 3> TimedPass::padded_grads() const {
  if (!inputs_.packed || !grads_[0].defined() || grads_[0].dim() != 3) return grads_;
  const PackedBatch& packed = *inputs_.packed;
  const std::int64_t batch = inputs_.query.size(0);
  return {packed.unpack(grads_[0], batch, inputs_.query.size(2)),
          packed.unpack_keys(grads_[1], batch, inputs_.key.size(2)),
          packed.unpack_keys(grads_[2], batch, inputs_.value.size(2))};
}

}  // namespace attnsweep
