#include "runner/measure/reference_chunks.hpp"

#include <ATen/ATen.h>

#include <algorithm>

namespace attnsweep {

at::Tensor ReferenceChunk::query_side(const at::Tensor& t) const {
  return t.narrow(0, batch, 1).narrow(1, first_kv_head * group, kv_heads * group).narrow(2, first_row, rows);
}

at::Tensor ReferenceChunk::key_side(const at::Tensor& t) const {
  return t.narrow(0, batch, 1).narrow(1, first_kv_head, kv_heads);
}

AttentionInputs ReferenceChunk::of(const AttentionInputs& inputs) const {
  AttentionInputs chunk = inputs;
  chunk.query = query_side(inputs.query);
  chunk.key = key_side(inputs.key);
  chunk.value = key_side(inputs.value);
  chunk.grouped = group != 1;
  // The mask's rows go with the query's: (Sq, Skv), or a variable-length
  // batch's per batch entry (batch, 1, Sq, Skv).
  const auto rows_of_mask = [&](const at::Tensor& mask) {
    if (!mask.defined()) return mask;
    if (mask.dim() == 4) return mask.narrow(0, batch, 1).narrow(2, first_row, rows);
    return mask.narrow(0, first_row, rows);
  };
  chunk.masked_out = rows_of_mask(inputs.masked_out);
  chunk.attend = rows_of_mask(inputs.attend);
  // Per query head: the chunk's heads of ALiBi's slopes and bias and of the sinks.
  const std::int64_t first_head = first_kv_head * group, heads = kv_heads * group;
  const auto heads_of = [&](const at::Tensor& t) { return t.defined() ? t.narrow(0, first_head, heads) : t; };
  chunk.alibi_slopes = heads_of(inputs.alibi_slopes);
  chunk.sinks = heads_of(inputs.sinks);
  chunk.key_distance = rows_of_mask(inputs.key_distance);
  if (inputs.alibi_bias.defined()) {
    const at::Tensor& bias = inputs.alibi_bias;  // (1 or batch, heads, Sq, Skv)
    chunk.alibi_bias = (bias.size(0) > 1 ? bias.narrow(0, batch, 1) : bias).narrow(1, first_head, heads).narrow(2, first_row, rows);
  }
  return chunk;
}

std::vector<ReferenceChunk> reference_chunks(const AttentionInputs& inputs, std::int64_t score_bytes) {
  const std::int64_t batches = inputs.query.size(0), kv_heads = inputs.key.size(1);
  const std::int64_t group = inputs.query.size(1) / kv_heads;
  const std::int64_t query_rows = inputs.query.size(2);
  const std::int64_t row_bytes = std::max<std::int64_t>(
      group * inputs.key.size(2) * static_cast<std::int64_t>(sizeof(double)), 1);  // one row, one key/value head
  const std::int64_t rows_in_budget = std::max<std::int64_t>(score_bytes / row_bytes, 1);
  // Whole key/value heads while they fit; beyond that one head at a time and a
  // run of rows.
  const std::int64_t head_step = std::clamp<std::int64_t>(rows_in_budget / std::max<std::int64_t>(query_rows, 1), 1,
                                                          kv_heads);
  const std::int64_t row_step = head_step > 1 ? query_rows : std::min(rows_in_budget, query_rows);
  std::vector<ReferenceChunk> chunks;
  for (std::int64_t b = 0; b < batches; ++b) {
    const std::int64_t real_length =
        inputs.packed ? inputs.packed->q_lens[static_cast<std::size_t>(b)] : query_rows;
    for (std::int64_t h = 0; h < kv_heads; h += head_step) {
      for (std::int64_t row = 0; row < query_rows; row += row_step) {
        const std::int64_t rows = std::min(row_step, query_rows - row);
        const std::int64_t real = std::clamp<std::int64_t>(real_length - row, 0, rows);
        chunks.push_back({b, h, std::min(head_step, kv_heads - h), group, row, rows, real});
      }
    }
  }
  return chunks;
}

}  // namespace attnsweep
