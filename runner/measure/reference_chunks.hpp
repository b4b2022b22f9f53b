#pragma once
// How the float64 references (accuracy.hpp, gradient_check.hpp) split a case:
// one batch entry, a run of key/value heads (with the query heads that share
// them) and a run of query rows at a time, so that a chunk's float64 score
// matrix stays under a budget (1 GiB by default). By heads alone, one chunk of
// 1x64/8x32768x128 held 8 x 32768 x 32768 doubles (64 GiB, kept for autograd):
// every backward at Llama-3.1's 32k context was `oom` because of the check, not
// the kernel (issue 33, item 1). Rows split the scores exactly: a query row's
// softmax needs all of its keys and no other row, so a chunk's output rows and
// dq are the whole case's; dk and dv are sums over a key block's row chunks.
#include <cstdint>
#include <vector>

#include "runner/variants/variant.hpp"

namespace attnsweep {

// The largest float64 score matrix one chunk computes, in bytes.
constexpr std::int64_t kReferenceChunkScoreBytes = std::int64_t{1} << 30;
// References (outputs, gradients) larger than this are recomputed for every
// variant of the same inputs instead of kept (accuracy.hpp, gradient_check.hpp).
constexpr std::int64_t kReferenceCacheBytes = std::int64_t{1} << 30;

struct ReferenceChunk {
  std::int64_t batch = 0;
  std::int64_t first_kv_head = 0, kv_heads = 1;
  std::int64_t group = 1;  // query heads per key/value head
  std::int64_t first_row = 0, rows = 0;  // the query rows [first_row, first_row + rows)
  std::int64_t real_rows = 0;  // of those, the ones that are not padding (a prefix; all of them when uniform)

  // The chunk of a (batch, heads, seq_len_q, head_dim) tensor: the output, dq, dout.
  at::Tensor query_side(const at::Tensor& t) const;
  // Of those, the rows that are not padding: what the numerics compare.
  at::Tensor real_rows_of(const at::Tensor& t) const { return t.narrow(2, 0, real_rows); }
  // The chunk's key block of a (batch, kv_heads, seq_len_kv, head_dim) tensor:
  // k, v, dk, dv (all keys: every row chunk of a block shares them).
  at::Tensor key_side(const at::Tensor& t) const;
  // The inputs narrowed to the chunk (grouped when a key/value head serves several query heads).
  AttentionInputs of(const AttentionInputs& inputs) const;
  // Whether this chunk begins a new key block (batch entry and key/value heads):
  // a block's row chunks come one after another, from row 0.
  bool starts_key_block() const { return first_row == 0; }
};

// Every (batch entry, query head, query row) in exactly one chunk; each chunk's
// float64 scores at most `score_bytes` (or one query row of one key/value head
// group where even that is larger). A key block's row chunks are consecutive.
std::vector<ReferenceChunk> reference_chunks(const AttentionInputs& inputs,
                                             std::int64_t score_bytes = kReferenceChunkScoreBytes);

}  // namespace attnsweep
