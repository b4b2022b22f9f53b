#pragma once
// A variable-length batch (issue 25) as the kernels that take one see it: the
// real rows of every sequence back to back, (total, heads, head_dim), with
// cumulative lengths, FlashAttention's layout. The padded tensors stay the
// case's inputs: padded variants run them with a mask that hides the padding.
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

namespace attnsweep {

struct PackedBatch {
  std::vector<std::int64_t> q_lens, kv_lens;  // per sequence
  at::Tensor cu_seqlens_q, cu_seqlens_k;      // int32, batch + 1 entries, on the inputs' device
  std::int64_t max_q = 0, max_kv = 0;
  at::Tensor query, key, value;               // (total, heads or kv_heads, head_dim)
  at::Tensor q_rows;                          // int64: where the packed query rows sit in the padded batch * seq_len_q rows
  at::Tensor kv_rows;                         // int64: the same for the key/value rows in batch * seq_len_kv

  // Packs padded q, k, v (batch, heads, seq, head_dim) of these lengths. Made
  // once per case, outside every timed pass.
  static PackedBatch of(const at::Tensor& query, const at::Tensor& key, const at::Tensor& value,
                        const std::vector<std::int64_t>& q_lens, const std::vector<std::int64_t>& kv_lens);
  // A packed output (total_q, heads, head_dim) as a padded one (batch, heads,
  // seq_len_q, head_dim), zeros in the padding rows: for the numerics check.
  at::Tensor unpack(const at::Tensor& packed, std::int64_t batch, std::int64_t seq_len_q) const;
  // The same for a packed key-side tensor (total_kv, kv_heads, d): dk and dv
  // of a packed backward, for the gradients' check.
  at::Tensor unpack_keys(const at::Tensor& packed, std::int64_t batch, std::int64_t seq_len_kv) const;
  // A padded query-side tensor (batch, heads, seq_len_q, d) as packed rows
  // (total_q, heads, d): the upstream gradient of a packed output.
  at::Tensor pack_query_side(const at::Tensor& padded) const;
  // The same batch with q, k and v as leaves that require grad (sharing their
  // storage): a packed variant's backward differentiates with respect to these.
  PackedBatch as_leaves() const;
  std::int64_t total_q() const { return query.size(0); }
};

}  // namespace attnsweep
