#pragma once
// The interface every attention variant implements (LibTorch side). Adding a
// variant means one new file and one line in variant_list.hpp.
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "runner/common/mask.hpp"
#include "runner/common/score_mod.hpp"
#include "runner/variants/packed_batch.hpp"
#include "runner/variants/paged_cache.hpp"

namespace attnsweep {

// Inputs in (batch, heads, seq, head_dim) layout, built once per case.
struct AttentionInputs {
  at::Tensor query, key, value;  // a variable-length batch's padded to its longest sequences
  Mask mask;                 // the case's (runner/common/mask.hpp)
  ScoreMod scores;           // the case's score modifications (runner/common/score_mod.hpp); none by default
  // Whether PyTorch's is_causal flag is exactly the mask: top-left causal, or
  // bottom-right on a square shape; no window. Never for a variable-length batch.
  bool causal = false;
  // bool, true where a key is masked; undefined without a mask. (Sq, Skv), or
  // (batch, 1, Sq, Skv) for a variable-length batch: each sequence's mask, its
  // padding keys masked, and its padding query rows see key 0 alone (their
  // outputs are not compared; a row without keys would be 0/0).
  at::Tensor masked_out;
  at::Tensor attend;         // its negation, SDPA's boolean attn_mask; undefined without a mask or where causal says it
  // ALiBi (undefined without it): the query heads' slopes, float32 (heads);
  // |i + diagonal_offset - j|, float32, shaped like masked_out; and the
  // additive bias -slope * distance in the inputs' dtype, -inf where masked,
  // (1, heads, Sq, Skv) or (batch, heads, Sq, Skv) for a variable-length batch:
  // what naive adds and SDPA takes as its float attn_mask.
  at::Tensor alibi_slopes, key_distance, alibi_bias;
  // Attention sinks (undefined without them): one logit per query head, float32 (heads).
  at::Tensor sinks;
  // An fp8 case (issue 36): query, key and value above are the fp8 tensors;
  // these the bf16 draw they were quantised from and the per-tensor descales.
  struct Quantized {
    at::Tensor query, key, value;                // bf16: what the stored error's reference is made from
    at::Tensor descale_q, descale_k, descale_v;  // float32 scalars: fp8 value * descale = the dequantised value
  };
  std::shared_ptr<const Quantized> quantized;  // null unless the dtype is fp8
  std::shared_ptr<const PackedBatch> packed;  // a variable-length batch packed (packed_batch.hpp); null when uniform
  std::shared_ptr<const PagedCache> paged;    // the key and value paged (paged_cache.hpp); null when contiguous
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

// What every built-in variant can run: a contiguous KV cache (PyTorch's C++ API
// has no attention over a paged one; op libraries that take a page table do).
inline Support builtin_layout_support(const AttentionInputs& inputs) {
  if (inputs.paged) {
    return {false, "a paged KV cache: PyTorch's attention has no entry point that reads one (the same shape with "
                   "page_size 0 is its contiguous baseline; an op library given page_table runs it)"};
  }
  return {};
}

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
