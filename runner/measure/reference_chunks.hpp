#pragma once
// How the float64 references (accuracy.hpp, gradient_check.hpp) split a case:
// one batch entry and a run of key/value heads (with the query heads that share
// them) at a time, so that a chunk's float64 score matrix stays under about
// 1 GiB: at 1x32x8192x128 the whole batch entry's would be 17 GB, several times
// over once softmax and autograd keep theirs.
#include <cstdint>
#include <vector>

#include "runner/variants/variant.hpp"

namespace attnsweep {

struct ReferenceChunk {
  std::int64_t batch = 0;
  std::int64_t first_kv_head = 0, kv_heads = 1;
  std::int64_t group = 1;  // query heads per key/value head
  std::int64_t real_rows = 0;  // the batch entry's query rows that are not padding (all of them when uniform)

  // The chunk of a (batch, heads, seq_len_q, head_dim) tensor: the output, dq, dout.
  at::Tensor query_side(const at::Tensor& t) const;
  // Of those, the rows that are not padding: what the numerics compare.
  at::Tensor real_rows_of(const at::Tensor& t) const { return t.narrow(2, 0, real_rows); }
  // The chunk of a (batch, kv_heads, seq_len_kv, head_dim) tensor: k, v, dk, dv.
  at::Tensor key_side(const at::Tensor& t) const;
  // The inputs narrowed to the chunk (grouped when a key/value head serves several query heads).
  AttentionInputs of(const AttentionInputs& inputs) const;
};

std::vector<ReferenceChunk> reference_chunks(const AttentionInputs& inputs);

}  // namespace attnsweep
