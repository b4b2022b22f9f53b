#pragma once
// The interface every attention variant implements (LibTorch side). Adding a
// variant means one new file and one line in variant_list.hpp.
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <optional>
#include <string>

#include "runner/common/mask.hpp"

namespace attnsweep {

// Inputs in (batch, heads, seq, head_dim) layout, built once per case.
struct AttentionInputs {
  at::Tensor query, key, value;
  Mask mask;                 // the case's (runner/common/mask.hpp)
  // Whether PyTorch's is_causal flag is exactly the mask: top-left causal, or
  // bottom-right on a square shape; no window.
  bool causal = false;
  at::Tensor masked_out;     // bool (Sq, Skv), true where a key is masked; undefined without a mask
  at::Tensor attend;         // its negation, SDPA's boolean attn_mask; undefined without a mask or where causal says it
  double scale = 1.0;
  bool grouped = false;    // kv_heads < heads
  // Which draw these are: unique in the process, new for every make_inputs. A
  // variant that keeps something made from the inputs (a layout copy) keys it on
  // this, never on a data pointer: freed memory is reused by the next case's
  // inputs, so an address does not say which inputs it holds (issue 21, item 1).
  std::uint64_t draw_id = 0;
};

// Whether a variant can run these inputs, and PyTorch's reason when not.
struct Support {
  bool supported = true;
  std::string reason;
};

class Variant {
 public:
  virtual ~Variant() = default;
  virtual std::string name() const = 0;
  // Asked once per case before anything runs.
  virtual Support check(const AttentionInputs& inputs) const = 0;
  // One forward pass. Called under no-grad; must not synchronize.
  virtual at::Tensor forward(const AttentionInputs& inputs) const = 0;
  // After the case's last forward, whatever its outcome: drop what was kept for
  // it. Returns what the variant found wrong with what it kept (an op that wrote
  // into its own laid-out copy of the inputs), or "" when nothing was.
  virtual std::string end_case() const { return ""; }
  // For SDPA variants, the backend that runs ("flash_attention", ...).
  virtual std::string sdpa_backend(const AttentionInputs& inputs) const { return ""; }
  // Why this variant has no backward on the inputs' device ("" when it has one:
  // every built-in variant is differentiable through PyTorch's autograd).
  virtual std::string backward_refusal(const AttentionInputs& inputs) const { return ""; }
  // For SDPA variants, the backend whose backward the output's autograd graph
  // will run ("flash_attention", ..., or "math" for the decomposed graph).
  virtual std::string sdpa_backend_backward(const at::Tensor& output) const { return ""; }
};

}  // namespace attnsweep
